//! What the MCP tests share: the example server, built and started as a real
//! child process over stdio or HTTP.

// Each MCP test crate uses a part of this module.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use typed_tools::{DynamicTool, Toolbox};

/// The `mcp_server` example's executable, built once per test binary with the
/// features this test binary was built with (so that under `cargo test` the
/// build is a no-op: the example was built with them), so that the tests
/// drive the program a user runs, not a copy of it.
pub(crate) fn example_server() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let features = [
            ("mcp-http", true),
            ("openai", cfg!(feature = "openai")),
            ("anthropic", cfg!(feature = "anthropic")),
        ]
        .iter()
        .filter(|(_, on)| *on)
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join(",");
        let output = Command::new(env!("CARGO"))
            .args([
                "build",
                "--example",
                "mcp_server",
                "--features",
                &features,
                "--quiet",
                "--message-format=json",
                "--manifest-path",
                concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"),
            ])
            .stderr(Stdio::inherit())
            .output()
            .expect("cargo runs");
        assert!(output.status.success(), "the mcp_server example builds");
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|message| message["target"]["name"] == "mcp_server")
            .find_map(|message| message["executable"].as_str().map(PathBuf::from))
            .expect("cargo names the example's executable")
    })
    .clone()
}

/// The example server as a command, with `args`.
pub(crate) fn server_command(args: &[&str]) -> Command {
    let mut command = Command::new(example_server());
    command.args(args);
    command
}

/// The example server over HTTP on a free loopback port: the child and its
/// MCP endpoint's URL. The child is killed when the guard drops.
pub(crate) fn http_server(args: &[&str]) -> (ServerProcess, String) {
    let mut command = server_command(&["--http", "127.0.0.1:0"]);
    command
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("the example server starts");
    let stderr = child.stderr.take().expect("stderr is piped");
    let mut lines = BufReader::new(stderr).lines();
    let url = lines
        .next()
        .and_then(Result::ok)
        .and_then(|line| line.strip_prefix("listening on ").map(str::to_owned))
        .expect("the server says where it listens");
    // Keep reading standard error so that the child never blocks on it.
    let rest = std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>());
    (
        ServerProcess {
            child,
            stderr: Some(rest),
        },
        url,
    )
}

/// The exit status of `child`, which must exit within 10 s.
pub(crate) fn wait_for_exit(child: &mut Child) -> ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the server did not exit"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A toolbox of the imported `tools` and nothing else.
pub(crate) fn toolbox_of(tools: Vec<DynamicTool>) -> Toolbox {
    toolbox_with(tools, typed_tools::recover::Policy::none())
}

/// A toolbox of the imported `tools`, each under `policy`.
pub(crate) fn toolbox_with(
    tools: Vec<DynamicTool>,
    policy: typed_tools::recover::Policy,
) -> Toolbox {
    tools
        .into_iter()
        .fold(Toolbox::builder().policy(policy), |builder, tool| {
            builder.dynamic(tool)
        })
        .build()
        .expect("the imported tools make a toolbox")
}

/// A server child process, killed on drop.
pub(crate) struct ServerProcess {
    pub(crate) child: Child,
    stderr: Option<std::thread::JoinHandle<Vec<String>>>,
}

impl ServerProcess {
    /// What the server wrote to standard error after its first line, once it exited.
    pub(crate) fn stderr_after_exit(&mut self) -> Vec<String> {
        self.stderr
            .take()
            .map(|thread| thread.join().unwrap_or_default())
            .unwrap_or_default()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
