//! A database's tables and columns as the tool's description lists them, so a model writes
//! queries without guessing names: one line per table, `name(column type, …)`, bounded by
//! `MAX_SCHEMA_CHARS` (the rest counted, and the model told where to look them up).

/// Columns read at most: a database with thousands of tables is described in part.
pub const MAX_COLUMNS: usize = 5_000;

/// Characters of the listing at most: it travels with every model request that offers the
/// tool, so it must leave the model room for the conversation.
pub const MAX_SCHEMA_CHARS: usize = 6_000;

/// One column of one table (the table qualified by its schema where that is not the default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaColumn {
    pub table: String,
    pub name: String,
    pub data_type: String,
}

/// The listing of `columns`, given in table order.
pub fn describe(columns: &[SchemaColumn]) -> String {
    let mut tables: Vec<(String, Vec<String>)> = Vec::new();
    for column in columns {
        let entry = format!("{} {}", column.name, column.data_type.to_lowercase());
        match tables.last_mut() {
            Some((table, entries)) if *table == column.table => entries.push(entry),
            _ => tables.push((column.table.clone(), vec![entry])),
        }
    }
    if tables.is_empty() {
        return "(no tables are visible to this connection)".into();
    }
    let mut listing = String::new();
    for (shown, (table, entries)) in tables.iter().enumerate() {
        let line = format!("{table}({})\n", entries.join(", "));
        if listing.len() + line.len() > MAX_SCHEMA_CHARS {
            listing.push_str(&format!(
                "… and {} more tables, not listed here: look them up in the database's catalog.\n",
                tables.len() - shown
            ));
            break;
        }
        listing.push_str(&line);
    }
    listing.trim_end().to_string()
}
