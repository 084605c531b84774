//! A real Postgres server for the tests that need one.

use std::path::Path;
use std::process::Command;

/// The server's URL, or `None` (after printing why) when none can start.
pub(crate) fn server() -> Option<String> {
    if let Ok(url) = std::env::var("TYPED_TOOLS_PG_URL") {
        return Some(url);
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/postgres/start.sh");
    let output = Command::new("bash").arg(&script).output();
    match output {
        Ok(output) if output.status.success() => {
            let text = String::from_utf8_lossy(&output.stdout);
            let url = text
                .lines()
                .find_map(|l| l.strip_prefix("export TYPED_TOOLS_PG_URL="))
                .map(str::to_owned);
            if url.is_none() {
                eprintln!("SKIPPED: {} printed no URL: {text}", script.display());
            }
            url
        }
        Ok(output) => {
            eprintln!(
                "SKIPPED: no Postgres server could be started: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            None
        }
        Err(error) => {
            eprintln!("SKIPPED: cannot run {}: {error}", script.display());
            None
        }
    }
}

/// A fresh database on the server, for one test: its URL.
pub(crate) fn database(name: &str) -> Option<String> {
    let url = server()?;
    let db = format!("tt_{name}_{}", std::process::id());
    admin(&url, &format!("DROP DATABASE IF EXISTS {db}"));
    admin(&url, &format!("CREATE DATABASE {db}"));
    let base = url.rsplit_once('/').map_or(url.as_str(), |(base, _)| base);
    Some(format!("{base}/{db}"))
}

/// Runs one SQL statement on the database at `url`.
pub(crate) fn admin(url: &str, sql: &str) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        let driver = tokio::spawn(connection);
        client.batch_execute(sql).await.unwrap();
        drop(client);
        let _ = driver.await;
    });
}

/// Drops the database at `url`, made by [`database`], with its connections.
pub(crate) fn drop_database(url: &str) {
    let Some((base, db)) = url.rsplit_once('/') else {
        return;
    };
    admin(
        &format!("{base}/postgres"),
        &format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"),
    );
}
