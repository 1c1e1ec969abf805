//! Chats organised (issue 50): `chat_folders`, a user's folders of chats (one level), and on
//! `chats` when it was pinned (`pinned_at`), archived (`archived_at`) and the folder it is in
//! (`folder_id`). `folder_id` has no foreign key (SQLite cannot drop a column that has one):
//! deleting a folder clears its chats' `folder_id` in the same transaction.

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
                    .table(ChatFolders::Table)
                    .if_not_exists()
                    .col(text(ChatFolders::Id).primary_key())
                    .col(text(ChatFolders::UserId))
                    .col(text(ChatFolders::Name))
                    .col(integer(ChatFolders::Position))
                    .col(timestamp_with_time_zone(ChatFolders::CreatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_chat_folders_user_id")
                            .from(ChatFolders::Table, ChatFolders::UserId)
                            .to(Users::Table, Users::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_chat_folders_user_id")
                    .table(ChatFolders::Table)
                    .col(ChatFolders::UserId)
                    .to_owned(),
            )
            .await?;
        // One column per statement: SQLite alters one thing at a time.
        for column in [
            timestamp_with_time_zone_null(NewColumn::PinnedAt),
            timestamp_with_time_zone_null(NewColumn::ArchivedAt),
            text_null(NewColumn::FolderId),
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Chats::Table)
                        .add_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [
            NewColumn::FolderId,
            NewColumn::ArchivedAt,
            NewColumn::PinnedAt,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Chats::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .drop_table(Table::drop().table(ChatFolders::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
pub enum ChatFolders {
    Table,
    Id,
    UserId,
    Name,
    Position,
    CreatedAt,
}

#[derive(DeriveIden)]
enum NewColumn {
    PinnedAt,
    ArchivedAt,
    FolderId,
}
