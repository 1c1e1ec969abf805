//! The command line: `serve` (the default), `migrate`, `create-user`, `create-api-key`,
//! `eval-retrieval` and `eval-duplicates`.
//! Each subcommand is a small function over the same configuration the server uses.

use std::io::BufRead;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};

use crate::auth::{Accounts, NewUser};
use crate::config::Config;
use crate::startup::Application;

#[derive(Debug, Parser)]
#[command(
    name = "colloquy",
    version,
    about = "A self-hosted, stateful chat session engine"
)]
pub struct Cli {
    /// A TOML configuration file (also COLLOQUY_CONFIG).
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the server (the default).
    Serve,
    /// Apply database migrations and exit.
    Migrate,
    /// Create a user. The password is read from the first line of standard input when
    /// --password-stdin is given; otherwise a one-time login link is printed.
    CreateUser {
        username: String,
        /// Make the user an administrator.
        #[arg(long)]
        admin: bool,
        /// Read the password from standard input.
        #[arg(long)]
        password_stdin: bool,
    },
    /// Create an API key for an existing user and print it (shown only once).
    CreateApiKey {
        username: String,
        /// A name to recognise the key by.
        #[arg(long, default_value = "cli")]
        name: String,
    },
    /// Measure document search on a test collection in BEIR's format (a directory with
    /// corpus.jsonl, queries.jsonl and qrels.tsv) through file_search's path: prints nDCG@10,
    /// Recall@10 and Recall@100 for BM25, vectors and fused, and the ingestion rate.
    EvalRetrieval {
        /// The collection's directory.
        dir: PathBuf,
        /// `hash`, or `minilm` (with --minilm-dir or the configured memory.minilm_dir).
        #[arg(long, default_value = "hash")]
        embedder: String,
        /// A MiniLM model directory (model.safetensors, tokenizer.json).
        #[arg(long, value_name = "DIR")]
        minilm_dir: Option<PathBuf>,
        /// Use only the first N documents.
        #[arg(long, value_name = "N")]
        documents: Option<usize>,
        /// Use only the first N questions (of those with a relevant document left).
        #[arg(long, value_name = "N")]
        queries: Option<usize>,
        /// The cosine's share of the fused score, in [0, 1], instead of the embedder's own.
        #[arg(long, value_name = "W")]
        vector_weight: Option<f32>,
        /// How words are read: a language (`english`, …) or `none`; by default the
        /// configured documents.stemming.
        #[arg(long, value_name = "LANGUAGE")]
        stemming: Option<String>,
        /// How much a word in a title or heading counts against one in the text.
        #[arg(long, value_name = "B", default_value_t = crate::retrieval::index::HEADINGS_BOOST)]
        headings_boost: f32,
    },
    /// Measure save_memory's near-duplicate check on labelled pairs (a JSON Lines file of
    /// `existing`, `new`, `duplicate`): prints precision and recall by threshold, the lowest
    /// threshold with precision 0.95, and the embedder's own.
    EvalDuplicates {
        /// The pairs file (tests/data/memory-duplicates/pairs.jsonl).
        pairs: PathBuf,
        /// `hash`, or `minilm` (with --minilm-dir or the configured memory.minilm_dir).
        #[arg(long, default_value = "hash")]
        embedder: String,
        /// A MiniLM model directory (model.safetensors, tokenizer.json).
        #[arg(long, value_name = "DIR")]
        minilm_dir: Option<PathBuf>,
        /// List the pairs judged wrongly at this threshold instead of the embedder's own.
        #[arg(long, value_name = "T")]
        threshold: Option<f32>,
        /// … and this synonym similarity.
        #[arg(long, value_name = "S")]
        synonyms: Option<f32>,
    },
}

pub async fn run(command: Option<Command>, config: Config) -> anyhow::Result<()> {
    match command.unwrap_or(Command::Serve) {
        Command::Serve => serve(config).await,
        Command::Migrate => {
            let db = crate::db::connect(&config).await?;
            crate::db::migrate(&db).await?;
            println!("database is up to date");
            Ok(())
        }
        Command::CreateUser {
            username,
            admin,
            password_stdin,
        } => {
            let accounts = accounts(&config).await?;
            let password = if password_stdin {
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line)?;
                Some(line.trim_end_matches(['\r', '\n']).to_string())
            } else {
                None
            };
            let user = accounts
                .create_user(NewUser {
                    username: &username,
                    password: password.as_deref(),
                    is_admin: admin,
                })
                .await?;
            println!("created user {} ({})", user.username, user.id);
            if password.is_none() {
                let link = accounts.issue_login_link(&user.id).await?;
                let base = config.public_url(config.bind.parse()?);
                println!("one-time login link: {base}/login?token={}", link.secret);
            }
            Ok(())
        }
        Command::CreateApiKey { username, name } => {
            let accounts = accounts(&config).await?;
            let user = accounts
                .find_user(&username)
                .await?
                .with_context(|| format!("no user named {username:?}"))?;
            let key = accounts.issue_api_key(&user.id, &name).await?;
            println!("{}", key.secret);
            Ok(())
        }
        Command::EvalRetrieval {
            dir,
            embedder,
            minilm_dir,
            documents,
            queries,
            vector_weight,
            stemming,
            headings_boost,
        } => {
            let minilm_dir = minilm_dir.or(config.memory.minilm_dir.clone());
            let slice = (documents, queries);
            let stemming = match stemming {
                Some(name) => {
                    crate::retrieval::Stemming::parse(&name).map_err(anyhow::Error::msg)?
                }
                None => config.documents.stemming.into(),
            };
            let embedder = eval_embedder(&embedder, minilm_dir)?;
            let tuning = (vector_weight, stemming, headings_boost);
            eval_retrieval(&dir, embedder.as_ref(), slice, tuning).await
        }
        Command::EvalDuplicates {
            pairs,
            embedder,
            minilm_dir,
            threshold,
            synonyms,
        } => {
            use crate::retrieval::eval::duplicates;
            let minilm_dir = minilm_dir.or(config.memory.minilm_dir.clone());
            let embedder = eval_embedder(&embedder, minilm_dir)?;
            let pairs = duplicates::load_pairs(&pairs)?;
            let mut check = embedder.duplicate_check();
            check.threshold = threshold.unwrap_or(check.threshold);
            check.synonyms = synonyms.unwrap_or(check.synonyms);
            let report = duplicates::evaluate_duplicates(&pairs, embedder.as_ref(), check).await?;
            print!("{report}");
            Ok(())
        }
    }
}

/// The embedder an evaluation names: `hash`, or `minilm` from a model directory.
fn eval_embedder(
    name: &str,
    minilm_dir: Option<PathBuf>,
) -> anyhow::Result<Box<dyn crate::retrieval::embed::Embedder>> {
    use crate::retrieval::embed::{hash::HashEmbedder, minilm::MiniLm};
    Ok(match name {
        "hash" => Box::new(HashEmbedder::default()),
        "minilm" => {
            let dir = minilm_dir.context("--embedder minilm needs --minilm-dir")?;
            Box::new(MiniLm::load(&dir)?)
        }
        other => anyhow::bail!("unknown embedder {other:?}: use hash or minilm"),
    })
}

async fn eval_retrieval(
    dir: &std::path::Path,
    embedder: &dyn crate::retrieval::embed::Embedder,
    (documents, queries): (Option<usize>, Option<usize>),
    (vector_weight, stemming, headings_boost): (Option<f32>, crate::retrieval::Stemming, f32),
) -> anyhow::Result<()> {
    use crate::retrieval::eval::{Collection, evaluate_tuned};
    let collection = Collection::load(dir, documents, queries)?;
    let index_dir =
        std::env::temp_dir().join(format!("colloquy-eval-{}", uuid::Uuid::new_v4().simple()));
    let report = evaluate_tuned(
        &collection,
        embedder,
        &index_dir,
        vector_weight,
        stemming,
        headings_boost,
    )
    .await;
    if let Err(err) = std::fs::remove_dir_all(&index_dir) {
        tracing::warn!(dir = %index_dir.display(), %err, "could not remove the evaluation index");
    }
    print!("{}", report?);
    Ok(())
}

async fn accounts(config: &Config) -> anyhow::Result<Accounts> {
    let db = crate::db::connect(config).await?;
    crate::db::migrate(&db).await?;
    Ok(Accounts::new(
        db,
        config.auth.session_ttl_hours,
        config.auth.login_link_ttl_minutes,
    )
    .with_max_api_keys_per_user(config.auth.max_api_keys_per_user))
}

async fn serve(config: Config) -> anyhow::Result<()> {
    let app = Application::build(config).await?;
    tracing::info!(address = %app.address(), "Colloquy is listening");
    if let Some(url) = app.login_url() {
        // Printed to stdout, not the log: it is a secret meant for the operator's eyes once.
        println!();
        println!("    Colloquy created the first admin. Open this one-time link to log in:");
        println!();
        println!("        {url}");
        println!();
    }
    app.run_until_stopped().await?;
    tracing::info!("Colloquy stopped");
    Ok(())
}
