//! Time per input byte of a streamed answer put together by each provider
//! client, at 1 KB, 100 KB, 1 MB and 32 MB of its worst shape known (every
//! event opens a new tool call: OpenAI's `tool_calls` indices in one chunk,
//! Anthropic's `content_block_start` events): it should be flat.
//!
//! `cargo bench --features openai,anthropic --bench provider_scaling`
//! (criterion reports throughput; bytes per second is the inverse of time
//! per byte). The stream is served by a server on 127.0.0.1 in the same
//! process, so what is measured is what a client does with a real body:
//! HTTP, server-sent events, the provider's events, assembly. The limit of
//! calls per answer is lifted, so that the work past it is measured too.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use serde_json::json;
use typed_tools::model::{Message, Model, Request};
use typed_tools::provider::{Anthropic, OpenAi};
use typed_tools::recover::Retry;

#[path = "../tests/support/providers.rs"]
#[allow(unreachable_pub)]
mod support;

use support::{anthropic_calls, openai_calls, Reply, Server};

const SIZES: [usize; 4] = [1_000, 100_000, 1_000_000, 32_000_000];

/// One OpenAI chunk opening calls, to about `bytes`.
fn openai_bytes(bytes: usize) -> String {
    let one =
        json!({"index": 0, "id": "c0", "function": {"name": "f", "arguments": "{}"}}).to_string();
    openai_calls((bytes / one.len()).max(1))
}

/// Anthropic `tool_use` blocks, an event each, to about `bytes`.
fn anthropic_bytes(bytes: usize) -> String {
    let one = anthropic_calls(1).len() - anthropic_calls(0).len();
    anthropic_calls((bytes / one).max(1))
}

fn scaling(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for (name, body) in [
        ("openai_calls", openai_bytes as fn(usize) -> String),
        ("anthropic_calls", anthropic_bytes),
    ] {
        let mut group = c.benchmark_group(format!("provider_scaling/{name}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(3));
        for size in SIZES {
            let text = body(size);
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_with_input(BenchmarkId::from_parameter(size), &text, |b, text| {
                b.iter_custom(|iterations| {
                    runtime.block_on(async {
                        let replies = (0..iterations).map(|_| Reply::events(text, 64 * 1024));
                        let server = Server::start(replies).await;
                        let client: Box<dyn Model> = match name {
                            "openai_calls" => Box::new(
                                OpenAi::new("m")
                                    .base_url(format!("{}/v1", server.url))
                                    .retry(Retry::exponential(1))
                                    .max_response_bytes(64 << 20)
                                    .max_calls_per_answer(usize::MAX)
                                    .streaming(true),
                            ),
                            _ => Box::new(
                                Anthropic::new("m")
                                    .base_url(&server.url)
                                    .retry(Retry::exponential(1))
                                    .max_response_bytes(64 << 20)
                                    .max_calls_per_answer(usize::MAX)
                                    .streaming(true),
                            ),
                        };
                        let start = std::time::Instant::now();
                        for _ in 0..iterations {
                            let request = Request::new(vec![Message::user("Hi")]);
                            let response = client.complete(request).await.unwrap();
                            std::hint::black_box(response);
                        }
                        start.elapsed()
                    })
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, scaling);
criterion_main!(benches);
