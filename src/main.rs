use clap::Parser;
use colloquy::cli::{self, Cli};
use colloquy::config::Config;

#[actix_web::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let config = Config::load(cli.config.as_deref())?;
    colloquy::telemetry::init(&config.log);
    cli::run(cli.command, config).await
}
