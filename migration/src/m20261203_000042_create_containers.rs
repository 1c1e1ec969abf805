//! `containers` and `container_files` (issue 46): the code interpreter's containers, each a
//! user's (and, when a chat made it, that chat's), and the files in them: what the user placed
//! there and what the code wrote, each kept in the storage under `containers/<id>/<file id>`
//! so it outlives the sandbox that held it.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000001_create_users_table::Users;
use crate::m20261121_000006_create_chats_table::Chats;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Containers::Table)
                    .if_not_exists()
                    .col(text(Containers::Id).primary_key())
                    .col(text(Containers::UserId))
                    .col(text_null(Containers::ChatId))
                    .col(text(Containers::Name))
                    .col(integer(Containers::ExpiresAfterMinutes))
                    .col(timestamp_with_time_zone(Containers::CreatedAt))
                    .col(timestamp_with_time_zone(Containers::LastActiveAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_containers_user_id")
                            .from(Containers::Table, Containers::UserId)
                            .to(Users::Table, Users::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_containers_chat_id")
                            .from(Containers::Table, Containers::ChatId)
                            .to(Chats::Table, Chats::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        for (name, column) in [
            ("idx_containers_user_id", Containers::UserId),
            ("idx_containers_chat_id", Containers::ChatId),
        ] {
            manager
                .create_index(
                    Index::create()
                        .if_not_exists()
                        .name(name)
                        .table(Containers::Table)
                        .col(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .create_table(
                Table::create()
                    .table(ContainerFiles::Table)
                    .if_not_exists()
                    .col(text(ContainerFiles::Id).primary_key())
                    .col(text(ContainerFiles::ContainerId))
                    .col(text(ContainerFiles::Path))
                    .col(big_integer(ContainerFiles::Bytes))
                    .col(text(ContainerFiles::Source))
                    .col(timestamp_with_time_zone(ContainerFiles::CreatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_container_files_container_id")
                            .from(ContainerFiles::Table, ContainerFiles::ContainerId)
                            .to(Containers::Table, Containers::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_container_files_path")
                    .table(ContainerFiles::Table)
                    .col(ContainerFiles::ContainerId)
                    .col(ContainerFiles::Path)
                    .unique()
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(ContainerFiles::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(Containers::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
pub enum Containers {
    Table,
    Id,
    UserId,
    ChatId,
    Name,
    ExpiresAfterMinutes,
    CreatedAt,
    LastActiveAt,
}

#[derive(DeriveIden)]
pub enum ContainerFiles {
    Table,
    Id,
    ContainerId,
    Path,
    Bytes,
    Source,
    CreatedAt,
}
