//! The check, when an agent is saved, that the database its `execute_sql` queries exists (the
//! one its `sql_database` names, else the only one declared; `tools` offers the tool).

use super::Launcher;
use crate::chat::agents::{Agent, AgentFields};
use crate::error::{AppError, AppResult};
use crate::tools::sql::{DatabaseChoice, EXECUTE_SQL};

/// Refuses a save that would leave the agent (`stored`, updated by `fields`) enabling
/// `execute_sql` with no database to query, or that names a database this server does not
/// declare (`400 unknown_sql_database`, or `sql_database_required` when several are declared
/// and it names none). A save that touches neither `enabled_tools` nor `sql_database` is not
/// checked: a database the operator removed does not stop an agent from being renamed.
pub fn check_sql_database(
    launcher: &Launcher,
    stored: Option<&Agent>,
    fields: &AgentFields,
) -> AppResult<()> {
    if fields.enabled_tools.is_none() && fields.sql_database.is_none() {
        return Ok(());
    }
    let refusal = |err: DatabaseChoice| {
        let code = match err {
            DatabaseChoice::NoneDeclared | DatabaseChoice::Unknown(..) => "unknown_sql_database",
            DatabaseChoice::Ambiguous(_) => "sql_database_required",
        };
        AppError::InvalidWithCode {
            code,
            message: format!("{EXECUTE_SQL}: {err}"),
        }
    };
    if let Some(Some(named)) = &fields.sql_database {
        launcher.sql.choose(Some(named)).map_err(refusal)?;
    }
    let enabled = match &fields.enabled_tools {
        Some(set) => set.as_ref(),
        None => stored.and_then(|agent| agent.enabled_tools.as_ref()),
    };
    if enabled.is_some_and(|named| named.iter().any(|name| name == EXECUTE_SQL)) {
        let database = match &fields.sql_database {
            Some(set) => set.as_deref(),
            None => stored.and_then(|agent| agent.sql_database.as_deref()),
        };
        launcher.sql.choose(database).map_err(refusal)?;
    }
    Ok(())
}
