use clap::Parser;
use colloquy::cli::{self, Cli};
use colloquy::config::Config;

fn main() -> anyhow::Result<()> {
    // SAFETY: first thing in `main`, before the runtime or anything else starts a thread.
    unsafe { colloquy::config::single_threaded_kernels() };
    // Still one thread: the table of open files grows without stalling the threads to come.
    colloquy::os_limits::reserve_file_table();
    actix_web::rt::System::new().block_on(run())
}

async fn run() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let config = Config::load(cli.config.as_deref())?;
    colloquy::telemetry::init(&config.log);
    cli::run(cli.command, config).await
}
