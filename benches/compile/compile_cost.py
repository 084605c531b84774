#!/usr/bin/env python3
"""The compile cost of `#[tool]`: a crate of N tools written with the macro
against the same N tools written by hand with serde + schemars derives and a
`match` on the name, each timed as a touch-and-rebuild (the crate alone; its
dependencies are built once before timing), in debug and in release.

    python3 benches/compile/compile_cost.py [--tools 1,50] [--runs 5] [--profiles debug,release] [--distinct-types]

The tools cycle through five shapes of parameters (so tools share parameter
types, as tools of one crate often do); with --distinct-types every tool has
its own pair of parameter types instead.

Runs of the two crates alternate, so that drift on a shared machine falls on
both alike; the medians and their ratio are printed per (N, profile). The
generated crates and their target directory live under
target/compile-bench/ (the crates are written anew whenever this script runs;
the target directory is kept, so dependencies are built once).

    python3 benches/compile/compile_cost.py --callgrind [--tools 50] [--profiles debug]

counts instead the instructions of the touched crate's rustc run under
valgrind's callgrind (installed from Debian's `valgrind`), the figure the
shared machine's noise does not move: one run per crate, rustc wrapped with
RUSTC_WORKSPACE_WRAPPER so that only the generated crate is measured.

Also printed: the size of the macro's expansion per tool (bytes of Rust after
`rustc -Zunpretty=expanded`, when a nightly toolchain is installed), the
figure to reduce when the ratio is too high.
"""

import argparse
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WORK = os.path.join(ROOT, "target", "compile-bench")

# The shapes the generated tools cycle through: (parameters, output type,
# body, whether it returns a Result, effect). Each is a tool a user writes.
SHAPES = [
    ([("city", "String", "The city, like `Lima`."), ("days", "Option<u8>", "Days ahead; today if absent.")],
     "String", 'format!("sunny in {city} in {} day(s)", days.unwrap_or(0))', False, "Network"),
    ([("a", "i64", "The first number."), ("b", "i64", "The second number.")],
     "i64", "a.wrapping_add(b)", False, "Pure"),
    ([("id", "u32", "The note's id.")],
     "String", 'if id == 0 { Err("no note 0".to_owned()) } else { Ok(format!("note {id}")) }', True, "Read"),
    ([("title", "String", "The title."), ("tags", "Vec<String>", "Tags, in order."), ("pinned", "bool", "Whether it stays on top.")],
     "u64", "(title.len() + tags.len() + pinned as usize) as u64", False, "Write"),
    ([("query", "String", "What to look for."), ("limit", "Option<u32>", "At most this many."), ("offset", "Option<u32>", "Skip this many.")],
     "Vec<String>", "vec![query; limit.unwrap_or(1).saturating_sub(offset.unwrap_or(0)) as usize]", False, "Read"),
]


# With --distinct-types: two parameters, of a different pair of these types in
# every tool, so that no two tools share their parameter types (the generic
# input code the macro uses is then compiled once per tool, as a derive is).
SCALARS = ["u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "bool", "String", "f64", "char"]
DISTINCT = False


def shape(i):
    if DISTINCT:
        pairs = list(itertools.permutations(SCALARS, 2))
        a, b = pairs[i % len(pairs)]
        effect = ["Pure", "Read", "Write", "Network"][i % 4]
        return ([("a", a, "The first value."), ("b", b, "The second value.")],
                "String", 'format!("{a:?} {b:?}")', False, effect)
    return SHAPES[i % len(SHAPES)]


def camel(name):
    return "".join(part.capitalize() for part in name.split("_"))


def params_of(params):
    return ", ".join(f"{n}: {t}" for n, t, _ in params)


def doc_args(params):
    lines = ["///", "/// # Arguments"]
    lines += [f"/// * `{n}` - {d}" for n, _, d in params]
    return "\n".join(lines)


def macro_crate(n):
    out = ["//! Generated: tools written with `#[tool]`.", "use typed_tools::{tool, Toolbox};", ""]
    for i in range(n):
        params, output, body, fallible, effect = shape(i)
        ret = f"Result<{output}, String>" if fallible else output
        out += [
            f"/// Tool number {i}: does its small job.",
            doc_args(params),
            f"#[tool(effects = {effect})]",
            f"pub fn tool_{i}({params_of(params)}) -> {ret} {{",
            f"    {body}",
            "}",
            "",
        ]
    tools = "".join(f"\n        .tool(Tool{i})" for i in range(n))
    out += [
        "/// Every tool in one toolbox.",
        "pub fn toolbox() -> Toolbox {",
        f"    Toolbox::builder(){tools}",
        "        .build()",
        '        .expect("distinct names")',
        "}",
    ]
    return "\n".join(out) + "\n"


def hand_crate(n):
    out = [
        "//! Generated: the same tools written by hand, with serde and schemars.",
        "use schemars::{schema_for, JsonSchema};",
        "use serde::Deserialize;",
        "",
    ]
    arms = []
    schemas = []
    for i in range(n):
        params, output, body, fallible, effect = shape(i)
        ret = f"Result<{output}, String>" if fallible else output
        fields = "\n".join(f"    /// {d}\n    pub {n_}: {t}," for n_, t, d in params)
        names = ", ".join(n_ for n_, _, _ in params)
        args = ", ".join(f"input.{n_}" for n_, _, _ in params)
        out += [
            f"/// Tool number {i}: does its small job.",
            f"pub fn tool_{i}({params_of(params)}) -> {ret} {{",
            f"    {body}",
            "}",
            "",
            f"/// The arguments of `tool_{i}`.",
            "#[derive(Deserialize, JsonSchema)]",
            "#[serde(deny_unknown_fields)]",
            f"pub struct Tool{i}Input {{",
            fields,
            "}",
            "",
        ]
        call = f"tool_{i}({args})"
        value = f"{call}?" if fallible else call
        arms.append(
            f'        "tool_{i}" => {{\n'
            f"            let input: Tool{i}Input = serde_json::from_str(args).map_err(|e| e.to_string())?;\n"
            f"            let output = {value};\n"
            f"            serde_json::to_string(&output).map_err(|e| e.to_string())\n"
            "        }"
        )
        schemas.append(
            f'        ("tool_{i}", "Tool number {i}: does its small job.", "{effect}",\n'
            f"         serde_json::to_value(schema_for!(Tool{i}Input)).expect(\"a schema\"),\n"
            f"         serde_json::to_value(schema_for!({output})).expect(\"a schema\")),"
        )
        del names
    out += [
        "/// Name, description, effects, input and output schema of every tool.",
        "pub fn catalog() -> Vec<(&'static str, &'static str, &'static str, serde_json::Value, serde_json::Value)> {",
        "    vec![",
        *schemas,
        "    ]",
        "}",
        "",
        "/// Calls tool `name` with argument text; its output as JSON text.",
        "pub fn dispatch(name: &str, args: &str) -> Result<String, String> {",
        "    match name {",
        *arms,
        '        other => Err(format!("unknown tool `{other}`")),',
        "    }",
        "}",
    ]
    return "\n".join(out) + "\n"


def manifest(name, deps):
    return (
        f'[package]\nname = "{name}"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n'
        f"[lib]\npath = \"src/lib.rs\"\n\n[dependencies]\n{deps}\n"
        # Its own workspace, so that the project's does not claim it.
        "\n[workspace]\n"
    )


def write_crates(n):
    root = ROOT.replace("\\", "/")
    deps_macro = f'typed-tools = {{ path = "{root}" }}\n'
    deps_hand = (
        'serde = { version = "1.0.200", features = ["derive"] }\n'
        'serde_json = { version = "1.0.120", features = ["preserve_order"] }\n'
        'schemars = "1.2"\n'
    )
    crates = {}
    for kind, deps, text in (("macro", deps_macro, macro_crate(n)), ("hand", deps_hand, hand_crate(n))):
        path = os.path.join(WORK, f"{kind}_{n}")
        os.makedirs(os.path.join(path, "src"), exist_ok=True)
        with open(os.path.join(path, "Cargo.toml"), "w") as f:
            f.write(manifest(f"bench_{kind}_{n}", deps))
        with open(os.path.join(path, "src", "lib.rs"), "w") as f:
            f.write(text)
        # One lock file for both, taken from the project's so that versions match.
        shutil.copy(os.path.join(ROOT, "Cargo.lock"), os.path.join(path, "Cargo.lock"))
        crates[kind] = path
    return crates


def cargo(path, profile, env):
    args = ["cargo", "build", "--quiet", "--offline", "--manifest-path", os.path.join(path, "Cargo.toml")]
    if profile == "release":
        args.append("--release")
    subprocess.run(args, check=True, env=env, cwd=ROOT)


def rebuild_time(path, profile, env):
    os.utime(os.path.join(path, "src", "lib.rs"))
    start = time.perf_counter()
    cargo(path, profile, env)
    return time.perf_counter() - start


WRAPPER = """#!/bin/sh
# rustc under callgrind for the generated crate; anything else (rustc -vV) as is.
case " $* " in
  *" --crate-name bench_"*) exec valgrind --tool=callgrind --callgrind-out-file="$CALLGRIND_OUT" "$@" 2>/dev/null ;;
  *) exec "$@" ;;
esac
"""


def instructions(path, profile, env):
    """Instructions rustc runs to rebuild the touched crate, by callgrind."""
    wrapper = os.path.join(WORK, "callgrind-rustc.sh")
    with open(wrapper, "w") as f:
        f.write(WRAPPER)
    os.chmod(wrapper, 0o755)
    out = os.path.join(WORK, f"callgrind.{os.path.basename(path)}.{profile}")
    env = dict(env, RUSTC_WORKSPACE_WRAPPER=wrapper, CALLGRIND_OUT=out)
    cargo(path, profile, env)  # a wrapper's first run may rebuild; not counted
    os.utime(os.path.join(path, "src", "lib.rs"))
    cargo(path, profile, env)
    with open(out) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    raise RuntimeError(f"no instruction count in {out}")


def expansion_bytes(path, env):
    """Bytes of the crate after macro expansion, if nightly is installed."""
    args = ["cargo", "+nightly", "rustc", "--quiet", "--offline", "--manifest-path",
            os.path.join(path, "Cargo.toml"), "--profile=check", "--", "-Zunpretty=expanded"]
    try:
        result = subprocess.run(args, capture_output=True, env=env, cwd=ROOT, timeout=600)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if result.returncode != 0:
        return None
    return len(result.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", default="1,50")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profiles", default="debug,release")
    parser.add_argument("--no-expansion", action="store_true")
    parser.add_argument("--distinct-types", action="store_true",
                        help="every tool with its own pair of parameter types")
    parser.add_argument("--callgrind", action="store_true",
                        help="count rustc's instructions under callgrind instead of timing")
    options = parser.parse_args()

    global DISTINCT
    DISTINCT = options.distinct_types
    os.makedirs(WORK, exist_ok=True)
    for entry in os.listdir(WORK):
        if entry != "target":
            path = os.path.join(WORK, entry)
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
    env = dict(os.environ)
    env["CARGO_TARGET_DIR"] = os.path.join(WORK, "target")
    # The project's toolchain, whatever directory cargo runs from.
    env.setdefault("RUSTUP_TOOLCHAIN", "1.95.0")

    rows = []
    sizes = {}
    for n in [int(x) for x in options.tools.split(",")]:
        crates = write_crates(n)
        for profile in options.profiles.split(","):
            for path in crates.values():  # dependencies once, untimed
                cargo(path, profile, env)
            if options.callgrind:
                m, h = (instructions(crates[kind], profile, env) for kind in ("macro", "hand"))
                print(f"{n:>3} tools, {profile:<7}: #[tool] {m / 1e9:.3f} G instructions, "
                      f"by hand {h / 1e9:.3f} G, ratio {m / h:.3f}x", flush=True)
                continue
            times = {"macro": [], "hand": []}
            for _ in range(options.runs):
                for kind in ("macro", "hand"):
                    times[kind].append(rebuild_time(crates[kind], profile, env))
            m, h = statistics.median(times["macro"]), statistics.median(times["hand"])
            rows.append((n, profile, m, h, times))
            print(f"{n:>3} tools, {profile:<7}: #[tool] {m:6.3} s, by hand {h:6.3} s, ratio {m / h:.2}x"
                  f"  (runs: {', '.join(f'{t:.2f}' for t in times['macro'])} | "
                  f"{', '.join(f'{t:.2f}' for t in times['hand'])})", flush=True)
        if not options.no_expansion:
            env_nightly = dict(env)
            env_nightly.pop("RUSTUP_TOOLCHAIN", None)
            sizes[n] = {kind: expansion_bytes(path, env_nightly) for kind, path in crates.items()}

    if sizes:
        print()
        ns = sorted(sizes)
        for n in ns:
            s = sizes[n]
            if s["macro"] is None:
                print(f"{n:>3} tools: expansion size needs a nightly toolchain (rustup toolchain install nightly)")
                continue
            print(f"{n:>3} tools: expanded #[tool] crate {s['macro']:,} bytes, hand-written {s['hand']:,} bytes")
        if len(ns) >= 2 and all(sizes[n]["macro"] for n in ns):
            lo, hi = ns[0], ns[-1]
            per_macro = (sizes[hi]["macro"] - sizes[lo]["macro"]) / (hi - lo)
            per_hand = (sizes[hi]["hand"] - sizes[lo]["hand"]) / (hi - lo)
            print(f"per tool: #[tool] {per_macro:,.0f} bytes of expanded Rust, by hand {per_hand:,.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
