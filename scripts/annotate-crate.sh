#!/usr/bin/env bash
# Where does #[retry] break real code? Annotates every Result-returning
# function of a published crate with
#   #[::backoff_runtime::retry(max_retries = 1, initial_backoff = "1ms")]
# then builds the crate and runs its own tests with and without it.
#
#   scripts/annotate-crate.sh NAME [VERSION]                 # e.g. url 2.5.8
#   scripts/annotate-crate.sh NAME [VERSION] --skip-failing  # drop the attribute
#       from functions that do not compile, until the crate builds, then test
#   scripts/annotate-crate.sh --help                         # all options
#   scripts/annotate-crate.sh url 2.5.8 --skip-failing --test-timeout 120 --runtime ../backoff-runtime
#
# The crate comes from the cargo registry cache, or is fetched from crates.io
# with `cargo fetch`. Work dir: /tmp/annotate/NAME-VERSION/{baseline,annotated,
# logs,report.json}; target dir /tmp/annotate/target (shared by all crates).
#   scripts/annotate-crate.sh deadpool 0.13.1 --skip-failing --features rt_tokio_1,rt_async-std_1,rt_smol_2
#
# Prints: functions annotated, and how many of them rustc compiled under the
# chosen features (async/sync); whether the annotated copy compiles; compile
# errors by kind with the functions involved and how many show the #[retry]
# line; tests whose outcome changed.
# The work is done by annotate_crate.py beside this script (python3, stdlib).
set -euo pipefail
exec python3 "$(dirname "$0")/annotate_crate.py" "$@"
