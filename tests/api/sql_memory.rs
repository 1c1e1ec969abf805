//! `execute_sql` never holds a huge value: one call for a value of hundreds of megabytes (built
//! by SQLite, or by the real PostgreSQL `COLLOQUY_TEST_POSTGRES_URL` names) grows the server's
//! peak resident memory by less than 50 MB. Measured in a process of its own (this test binary
//! run again for the probe alone), so no other test's memory counts.

use crate::sql::SeededPostgres;
use crate::sql_guard::{call_all, shop_chat_within};

/// Set (to `sqlite` or `postgres`) in the process `peak_memory_of_one_call` starts for the
/// probe; unset, the probe returns at once.
const PROBE_VAR: &str = "COLLOQUY_TEST_SQL_MEMORY_PROBE";

/// Kilobytes of the largest resident set this process has had (`VmHWM`).
fn peak_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/self/status")
}

#[actix_web::test]
async fn the_memory_probe_calls_for_a_huge_value_when_run_in_a_process_of_its_own() {
    let Ok(which) = std::env::var(PROBE_VAR) else {
        return;
    };
    let files = tempfile::tempdir().unwrap();
    let (shop, url, sql) = if which == "postgres" {
        let shop = SeededPostgres::create().await.expect("a PostgreSQL server");
        let url = shop.reader.url.clone();
        (Some(shop), url, "SELECT repeat('x', 300000000) AS huge")
    } else {
        let path = crate::sql::seeded_sqlite(files.path()).await;
        let url = format!("sqlite://{}", path.display());
        (None, url, "SELECT printf('%.*c', 400000000, 'x') AS huge")
    };
    // Building the value alone takes the server a while.
    let (app, _, chat) = shop_chat_within(&url, false, 12_000).await;
    call_all(&app, &chat, &[("warm", "SELECT 1 AS one")]).await;
    let before = peak_kb();
    let results = call_all(&app, &chat, &[("huge", sql)]).await;
    let after = peak_kb();
    let huge = &results["huge"];
    assert!(huge["rows"].is_array(), "a result, not an error: {huge}");
    println!("peak growth kB: {}", after.saturating_sub(before));
    println!("peak before kB: {before}, after: {after}; result: {huge:.200}");
    drop(app);
    if let Some(shop) = shop {
        shop.drop_database().await;
    }
}

#[test]
fn a_huge_value_grows_the_servers_peak_memory_by_less_than_50_mb() {
    let postgres = std::env::var("COLLOQUY_TEST_POSTGRES_URL").is_ok();
    for which in ["sqlite", "postgres"] {
        if which == "postgres" && !postgres {
            println!("skipped on PostgreSQL: COLLOQUY_TEST_POSTGRES_URL is not set");
            continue;
        }
        let mut probe = std::process::Command::new(std::env::current_exe().unwrap());
        probe
            .args([
                "--exact",
                "sql_memory::the_memory_probe_calls_for_a_huge_value_when_run_in_a_process_of_its_own",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(PROBE_VAR, which);
        let output = crate::subprocess::output_within(
            probe,
            "the memory probe",
            crate::subprocess::CLIENT_LIMIT,
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let growth: u64 = stdout
            .lines()
            .find_map(|line| line.split_once("peak growth kB: ").map(|(_, kb)| kb))
            .and_then(|kb| kb.trim().parse().ok())
            .unwrap_or_else(|| panic!("no measure in {stdout}"));
        println!("{which}: peak resident memory grew by {growth} kB");
        assert!(growth < 50 * 1024, "{which}: grew by {growth} kB\n{stdout}");
    }
}
