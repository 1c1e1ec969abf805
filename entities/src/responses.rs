//! `responses` table: a stored Responses API response, one per run, in the chat it ran in.

use sea_orm::entity::prelude::*;

use crate::ids::{ChatId, ResponseId, RunId, UserId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "responses")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: ResponseId,
    #[sea_orm(column_type = "Text")]
    pub user_id: UserId,
    #[sea_orm(column_type = "Text")]
    pub chat_id: ChatId,
    #[sea_orm(column_type = "Text")]
    pub run_id: RunId,
    #[sea_orm(column_type = "Text", nullable)]
    pub previous_response_id: Option<ResponseId>,
    /// What was asked beside the input: instructions, tools, sampling, metadata.
    pub request: Json,
    /// The request's input, as a list of items.
    pub input_items: Json,
    /// The response object once the run ended; `NULL` while it runs.
    pub body: Option<Json>,
    pub created_at: ChronoDateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::users::Entity",
        from = "Column::UserId",
        to = "super::users::Column::Id",
        on_update = "NoAction",
        on_delete = "Cascade"
    )]
    Users,
    #[sea_orm(
        belongs_to = "super::chats::Entity",
        from = "Column::ChatId",
        to = "super::chats::Column::Id",
        on_update = "NoAction",
        on_delete = "Cascade"
    )]
    Chats,
}

impl ActiveModelBehavior for ActiveModel {}
