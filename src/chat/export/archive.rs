//! All of an account's chats as one zip archive: for each, its JSON export (which imports back)
//! and its Markdown, named after its title and id. Bounded by `MAX_ARCHIVE_CHATS`; the JSON and
//! the zip are made on the blocking pool (work that grows with the account).

use std::io::Write;

use entities::chats;
use entities::ids::UserId;
use sea_orm::{
    ColumnTrait, DatabaseConnection, DbErr, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
};

use super::{ChatExport, export_chat, file_stem, to_markdown};

/// Most chats one archive holds: the archive is built in memory before it is sent.
pub const MAX_ARCHIVE_CHATS: u64 = 1_000;
/// The folder every file of an archive is in.
const FOLDER: &str = "colloquy-chats";

#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error(
        "this account has {count} chats; an archive holds at most {limit}: export the others one by one"
    )]
    TooMany { count: u64, limit: u64 },
    #[error("the archive could not be written: {0}")]
    Zip(String),
    #[error(transparent)]
    Database(#[from] DbErr),
}

/// The zip of `owner`'s chats (not the vector stores' or the `/v1` API's unkept ones).
pub async fn archive(db: &DatabaseConnection, owner: &UserId) -> Result<Vec<u8>, ArchiveError> {
    let listed = chats::Entity::find()
        .filter(chats::Column::UserId.eq(owner.clone()))
        .filter(chats::Column::Ephemeral.eq(false))
        .filter(chats::Column::IsVectorStore.eq(false));
    let count = listed.clone().count(db).await?;
    if count > MAX_ARCHIVE_CHATS {
        return Err(ArchiveError::TooMany {
            count,
            limit: MAX_ARCHIVE_CHATS,
        });
    }
    let rows = listed
        .order_by_desc(chats::Column::UpdatedAt)
        .all(db)
        .await?;
    let mut exports = Vec::with_capacity(rows.len());
    for chat in &rows {
        exports.push(export_chat(db, chat).await?);
    }
    tokio::task::spawn_blocking(move || zip_of(exports))
        .await
        .map_err(|err| ArchiveError::Zip(err.to_string()))?
}

fn zip_of(exports: Vec<ChatExport>) -> Result<Vec<u8>, ArchiveError> {
    use zip::write::SimpleFileOptions;
    let zip_error = |err: zip::result::ZipError| ArchiveError::Zip(err.to_string());
    let io_error = |err: std::io::Error| ArchiveError::Zip(err.to_string());
    // Stored, not deflated: the zip crate is built here without compression.
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for export in &exports {
        let stem = file_stem(&export.chat.title, &export.chat.id);
        let json =
            serde_json::to_vec_pretty(export).map_err(|err| ArchiveError::Zip(err.to_string()))?;
        writer
            .start_file(format!("{FOLDER}/{stem}.json"), options)
            .map_err(zip_error)?;
        writer.write_all(&json).map_err(io_error)?;
        writer
            .start_file(format!("{FOLDER}/{stem}.md"), options)
            .map_err(zip_error)?;
        writer
            .write_all(to_markdown(export).as_bytes())
            .map_err(io_error)?;
    }
    Ok(writer.finish().map_err(zip_error)?.into_inner())
}
