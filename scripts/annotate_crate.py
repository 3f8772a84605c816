#!/usr/bin/env python3
"""Put #[retry] on every Result-returning function of a published crate and
compare the crate's own tests with and without it.

    scripts/annotate-crate.sh NAME [VERSION] [--skip-failing] [options]

Steps (all under --work, default /tmp/annotate/NAME-VERSION):
  1. copy the crate's source from the cargo registry cache (fetching it with
     a throwaway project and `cargo fetch` when it is not there) into
     baseline/ and annotated/; both get an empty [workspace] table;
  2. in annotated/src, write
     #[::backoff_runtime::retry(max_retries = 1, initial_backoff = "1ms")]
     before every function with a body whose return type is a path ending in
     `Result` (`Result<..>`, `io::Result<..>`, `fmt::Result`, ...), except
     `const fn`, `extern` functions, functions inside macro bodies and
     functions in `#[cfg(test)]` modules; the attribute goes on the
     function's own line, so line numbers do not move; annotated/ depends on
     backoff-runtime by path (--runtime, default this repository's); each
     such function also gets a marker, `let annotate_marker_N = ();`, as the
     first statement of its body (same line), whose `unused variable`
     warning tells which functions rustc compiled under the features of the
     run (--features, --cargo-args): a function behind a `#[cfg]` that is
     off is counted as annotated but not compiled;
  3. build the lib and test targets of both; if annotated/ does not compile,
     print the errors grouped by kind with the functions involved, and for
     each kind how many show the #[retry] line and say they "originate in
     the attribute macro `retry`"; with
     --skip-failing, take the attribute off those functions and build again
     until it compiles;
  4. run every test binary of both, one test at a time (a test running
     longer than --test-timeout seconds is stopped and counted as TIMEOUT;
     a `harness = false` binary is one test, and the lines it prints only
     when annotated are shown), and print the tests whose outcome differs,
     with the start of each new failure's output.

Everything is also written to WORK/report.json and WORK/logs/. Needs python3
(stdlib only) and cargo; crates.io is reached only to fetch the crate and
its dependencies.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

ATTR = '#[::backoff_runtime::retry(max_retries = 1, initial_backoff = "1ms")] '

# ---------------------------------------------------------------------------
# A small Rust tokenizer: comments dropped, strings/chars/lifetimes kept as
# single tokens, so braces and `fn` inside them are never seen.

RAW_STR = re.compile(r'(?:b|c)?r(#*)"')
STR = re.compile(r'(?:b|c)?"')
IDENT = re.compile(r'(?:r#)?[A-Za-z_][A-Za-z0-9_]*')
NUMBER = re.compile(r'[0-9][0-9A-Za-z_]*')
PUNCT2 = ('->', '::', '=>')


class Tok:
    __slots__ = ('kind', 'text', 'pos')

    def __init__(self, kind, text, pos):
        self.kind, self.text, self.pos = kind, text, pos

    def __repr__(self):
        return f'{self.kind}:{self.text}'


def tokenize(src):
    toks, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if c.isspace():
            i += 1
        elif src.startswith('//', i):
            j = src.find('\n', i)
            i = n if j < 0 else j
        elif src.startswith('/*', i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith('/*', j):
                    depth, j = depth + 1, j + 2
                elif src.startswith('*/', j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            i = j
        elif m := RAW_STR.match(src, i):
            end = src.find('"' + m.group(1), m.end())
            j = n if end < 0 else end + 1 + len(m.group(1))
            toks.append(Tok('str', src[i:j], i))
            i = j
        elif m := STR.match(src, i):
            j = m.end()
            while j < n and src[j] != '"':
                j += 2 if src[j] == '\\' else 1
            toks.append(Tok('str', src[i:j + 1], i))
            i = j + 1
        elif c == "'" or src.startswith("b'", i):
            k = i + 1 if c == "'" else i + 2
            if k < n and src[k] == '\\':  # '\n', '\'', '\u{..}'
                j = src.find("'", k + 2) + 1
                toks.append(Tok('char', src[i:j], i))
            elif k + 1 < n and src[k + 1] == "'":  # 'x'
                j = k + 2
                toks.append(Tok('char', src[i:j], i))
            else:  # a lifetime or label
                m = IDENT.match(src, k)
                j = m.end() if m else k
                toks.append(Tok('lifetime', src[i:j], i))
            i = j
        elif m := IDENT.match(src, i):
            toks.append(Tok('ident', m.group(), i))
            i = m.end()
        elif m := NUMBER.match(src, i):
            toks.append(Tok('num', m.group(), i))
            i = m.end()
        elif src[i:i + 2] in PUNCT2:
            toks.append(Tok('punct', src[i:i + 2], i))
            i += 2
        else:
            if ord(c) > 127 and (c.isalpha() or c == '_'):  # non-ASCII identifier
                j = i
                while j < n and (src[j].isalnum() or src[j] == '_'):
                    j += 1
                toks.append(Tok('ident', src[i:j], i))
                i = j
                continue
            toks.append(Tok('punct', c, i))
            i += 1
    return toks


OPEN = {'(': ')', '[': ']', '{': '}'}
KEYWORDS = {'if', 'while', 'match', 'return', 'in', 'let', 'else', 'break', 'mut', 'ref'}
QUALIFIERS = {'async', 'unsafe', 'const', 'extern', 'default', 'safe'}


def match_brackets(toks):
    match, stack = [None] * len(toks), []
    for i, t in enumerate(toks):
        if t.kind != 'punct':
            continue
        if t.text in OPEN:
            stack.append(i)
        elif t.text in (')', ']', '}') and stack:
            j = stack.pop()
            match[i], match[j] = j, i
    return match


def attrs_before(toks, match, i):
    """The outer attributes (as token-text lists) right before index i."""
    attrs = []
    while i > 0 and toks[i - 1].text == ']' and match[i - 1] is not None:
        o = match[i - 1]
        if o > 0 and toks[o - 1].text == '#':
            attrs.append([t.text for t in toks[o + 1:i - 1]])
            i = o - 1
        elif o > 1 and toks[o - 1].text == '!' and toks[o - 2].text == '#':
            i = o - 2  # an inner attribute: not ours
            break
        else:
            break
    return attrs, i


def is_test_attr(attr):
    """`#[cfg(test)]`, `#[test]`, `#[tokio::test]`, `#[cfg(all(test, ..))]`."""
    if attr and attr[0] == 'cfg':
        return 'test' in attr and 'not' not in attr
    return bool(attr) and attr[-1] == 'test' or attr[-3:] == ['test', '(', ')']


def skip_visibility_back(toks, match, i):
    """Index of the first token of `pub`/`pub(..)` ending just before i, else i."""
    if i > 0 and toks[i - 1].text == ')' and match[i - 1] and toks[match[i - 1] - 1].text == 'pub':
        return match[i - 1] - 1
    if i > 0 and toks[i - 1].text in ('pub', 'crate'):
        return i - 1
    return i


RESULT_NAMES = {'Result'}  # plus the crate's aliases of it, found by result_aliases()


def is_result_type(ty):
    """A path whose last segment is `Result` (or an alias of it declared in
    the crate, like `type ParseResult<T> = Result<T, ParseError>`), with
    optional generics, and nothing else."""
    i = 0
    if i < len(ty) and ty[i].text == '::':
        i += 1
    last = None
    while i < len(ty) and ty[i].kind == 'ident':
        last = ty[i].text
        i += 1
        if i < len(ty) and ty[i].text == '::':
            i += 1
            continue
        break
    if last not in RESULT_NAMES:
        return False
    if i == len(ty):
        return True
    if ty[i].text != '<':
        return False
    depth = 0
    for j in range(i, len(ty)):
        depth += {'<': 1, '>': -1}.get(ty[j].text, 0)
        if depth == 0:
            return j == len(ty) - 1
    return False


def impl_name(toks, match, i, end):
    """`impl<..> Trait for Type<..> where ..` (tokens i..end) -> 'Type'."""
    body = toks[i + 1:end]
    j = 0
    if body and body[0].text == '<':  # impl generics
        depth = 0
        for j, t in enumerate(body):
            depth += {'<': 1, '>': -1}.get(t.text, 0)
            if depth == 0:
                break
        j += 1
    depth, names, seen_for = 0, [], False
    for t in body[j:]:
        if t.text == 'where' and depth == 0:
            break
        depth += {'<': 1, '>': -1}.get(t.text, 0)
        if depth == 0 and t.text == 'for':
            names, seen_for = [], True
        elif depth == 0 and t.kind == 'ident' and t.text not in ('dyn', 'mut', 'const', 'unsafe', 'impl'):
            names.append(t.text)
    return names[-1] if names else '?'


def find_functions(src):
    """Every function of interest in one file: a dict per function with its
    name, the insertion offset, the line of `fn`, the body's last line, and
    whether it qualifies (else why not)."""
    toks = tokenize(src)
    match = match_brackets(toks)
    line_of = lambda pos: src.count('\n', 0, pos) + 1
    # Each opening bracket: what it is. 'macro' (an invocation or macro_rules
    # body), 'test' (a #[cfg(test)] module), ('impl', name), or None.
    role = {}
    for i, t in enumerate(toks):
        if t.kind != 'punct' or t.text not in OPEN or match[i] is None:
            continue
        if i >= 2 and toks[i - 1].kind == 'ident' and toks[i - 2].text == '!' and i >= 3 and toks[i - 3].text == 'macro_rules':
            role[i] = 'macro'
        elif i >= 2 and toks[i - 1].text == '!' and toks[i - 2].kind == 'ident' and toks[i - 2].text not in KEYWORDS:
            role[i] = 'macro'
        elif t.text == '{' and i >= 2 and toks[i - 2].text == 'mod':
            attrs, _ = attrs_before(toks, match, skip_visibility_back(toks, match, i - 2))
            if any(is_test_attr(a) for a in attrs):
                role[i] = 'test'
    # impl and trait blocks, for names
    for i, t in enumerate(toks):
        item_start = i == 0 or toks[i - 1].text in ('}', ';', ']', '{', 'unsafe', 'default', 'pub', ')', 'auto')
        if t.text in ('impl', 'trait') and t.kind == 'ident' and item_start:
            j = i + 1
            depth = 0
            while j < len(toks):
                x = toks[j].text
                if x in ('(', '['):
                    j = match[j] if match[j] else j
                elif x == '<':
                    depth += 1
                elif x == '>':
                    depth -= 1
                elif x == '{' and depth <= 0:
                    break
                elif x == ';' and depth <= 0:
                    j = None
                    break
                j += 1
            if j is not None and j < len(toks) and j not in role:
                name = impl_name(toks, match, i, j) if t.text == 'impl' else (toks[i + 1].text if i + 1 < len(toks) else '?')
                role[j] = ('impl', name)

    functions = []
    stack = []  # open bracket indices enclosing the current token
    for i, t in enumerate(toks):
        if t.kind == 'punct':
            if t.text in OPEN and match[i] is not None:
                stack.append(i)
                continue
            if t.text in (')', ']', '}') and stack and match[i] == stack[-1]:
                stack.pop()
                continue
        if not (t.kind == 'ident' and t.text == 'fn' and i + 1 < len(toks) and toks[i + 1].kind == 'ident'):
            continue
        name = toks[i + 1].text
        roles = [role.get(s) for s in stack]
        owner = next((r[1] for r in reversed(roles) if isinstance(r, tuple)), None)
        # the signature
        j = i + 2
        if j < len(toks) and toks[j].text == '<':
            depth = 0
            while j < len(toks):
                x = toks[j].text
                if x in OPEN and match[j]:
                    j = match[j]
                elif x == '<':
                    depth += 1
                elif x == '>':
                    depth -= 1
                    if depth == 0:
                        j += 1
                        break
                j += 1
        if j >= len(toks) or toks[j].text != '(' or not match[j]:
            continue
        j = match[j] + 1
        ret = []
        if j < len(toks) and toks[j].text == '->':
            j += 1
            depth = 0
            while j < len(toks):
                x = toks[j].text
                if depth <= 0 and x in ('{', ';', 'where'):
                    break
                if x in ('(', '[') and match[j]:
                    ret.extend(toks[j:match[j] + 1])
                    j = match[j] + 1
                    continue
                depth += {'<': 1, '>': -1}.get(x, 0)
                ret.append(toks[j])
                j += 1
        while j < len(toks) and toks[j].text not in ('{', ';'):
            j = match[j] + 1 if toks[j].text in ('(', '[') and match[j] else j + 1
        if j >= len(toks) or toks[j].text != '{' or not match[j]:
            continue  # no body
        if not is_result_type(ret):
            continue
        # qualifiers and visibility before `fn`
        k, quals = i, []
        while k > 0 and (toks[k - 1].text in QUALIFIERS or (toks[k - 1].kind == 'str' and k > 1 and toks[k - 2].text == 'extern')):
            quals.append(toks[k - 1].text)
            k -= 1
        k = skip_visibility_back(toks, match, k)
        attrs, _ = attrs_before(toks, match, k)
        skip = None
        if 'macro' in roles:
            skip = 'inside a macro'
        elif 'test' in roles or any(is_test_attr(a) for a in attrs):
            skip = 'test code'
        elif 'const' in quals:
            skip = 'const fn'
        elif 'extern' in quals:
            skip = 'extern fn'
        # where the marker goes: just inside the body, after its inner attributes
        b = j + 1
        while (b + 2 < len(toks) and toks[b].text == '#' and toks[b + 1].text == '!'
               and toks[b + 2].text == '[' and match[b + 2]):
            b = match[b + 2] + 1
        functions.append({
            'name': f'{owner}::{name}' if owner else name,
            'insert_at': toks[k].pos,
            'attr_col': toks[k].pos - src.rfind('\n', 0, toks[k].pos),  # 1-based, as rustc's columns
            'body_at': toks[b - 1].pos + 1,
            'line': line_of(t.pos),
            'start_line': line_of(toks[k].pos),
            'end_line': line_of(toks[match[j]].pos),
            'async': 'async' in quals,
            'skip': skip,
        })
    return functions


def test_module_files(root, src):
    """Files of modules declared `#[cfg(test)] mod x;` in src (to leave alone)."""
    out = set()
    for path in sorted(src.rglob('*.rs')):
        text = path.read_text(errors='replace')
        toks = tokenize(text)
        match = match_brackets(toks)
        for i in range(len(toks) - 2):
            if toks[i].text == 'mod' and toks[i + 1].kind == 'ident' and toks[i + 2].text == ';':
                attrs, _ = attrs_before(toks, match, skip_visibility_back(toks, match, i))
                if any(is_test_attr(a) for a in attrs):
                    base = path.parent if path.name in ('lib.rs', 'main.rs', 'mod.rs') else path.parent / path.stem
                    m = toks[i + 1].text
                    out |= {base / f'{m}.rs', base / m}
    return out


def result_aliases(files):
    """Adds to RESULT_NAMES every `type X<..> = <a Result type>;` of the crate."""
    decls = []
    for path in files:
        toks = tokenize(path.read_text(errors='replace'))
        for i in range(len(toks) - 1):
            if toks[i].text == 'type' and toks[i + 1].kind == 'ident':
                j = i + 2
                while j < len(toks) and toks[j].text not in ('=', ';', '{'):
                    j += 1
                if j < len(toks) and toks[j].text == '=':
                    k = j + 1
                    while k < len(toks) and toks[k].text != ';':
                        k += 1
                    decls.append((toks[i + 1].text, toks[j + 1:k]))
    changed = True
    while changed:
        changed = False
        for name, ty in decls:
            if name not in RESULT_NAMES and is_result_type(ty):
                RESULT_NAMES.add(name)
                changed = True


MARKER = 'annotate_marker_'


def marker(n):
    """A statement whose only effect is rustc's `unused variable` warning,
    naming the function: rustc sees it only when it compiles the function
    (cfg-stripped items never reach the lints). The `warn` keeps it a
    warning under the crate's `allow(unused)` or `deny(warnings)`."""
    return f'#[warn(warnings, unused_variables)] let {MARKER}{n} = (); '


def annotate(tree, skip_keys=frozenset(), markers=False):
    """Annotate tree/src in place. Returns every candidate function, with
    'annotated' true for those that got the attribute. With markers, every
    candidate (annotated or left without the attribute because it failed to
    compile) also gets marker(its 'id') as the first statement of its body,
    on the same line, so that the build says which functions it compiled."""
    src = tree / 'src'
    excluded = test_module_files(tree, src)
    result_aliases(sorted(src.rglob('*.rs')))
    result = []
    for path in sorted(src.rglob('*.rs')):
        rel = str(path.relative_to(tree))
        if any(path == e or e in path.parents for e in excluded):
            continue
        text = path.read_text()
        fns = find_functions(text)
        inserts = []
        for f in fns:
            f['file'] = rel
            key = f'{rel}:{f["line"]}'
            f['key'] = key
            if f['skip'] is None and key in skip_keys:
                f['skip'] = 'failed to compile'
            f['annotated'] = f['skip'] is None
            f['id'] = len(result)
            if f['annotated']:
                inserts.append((f['insert_at'], 1, ATTR))
            if markers and f['skip'] in (None, 'failed to compile'):
                inserts.append((f['body_at'], 0, marker(f['id'])))  # before an ATTR at the same place
            del f['insert_at'], f['body_at']
            result.append(f)
        for pos, _, text_in in sorted(inserts, reverse=True):
            text = text[:pos] + text_in + text[pos:]
        if inserts:
            path.write_text(text)
    return result


# ---------------------------------------------------------------------------
# Crate source and manifests


def run(cmd, cwd=None, env=None, check=True, capture=False, log=None):
    out = subprocess.run(cmd, cwd=cwd, env=env, text=True,
                         stdout=subprocess.PIPE if (capture or log) else None,
                         stderr=subprocess.STDOUT if log else None)
    if log:
        Path(log).write_text(out.stdout)
    if check and out.returncode:
        sys.exit(f'failed ({out.returncode}): {" ".join(map(str, cmd))}' + (f' (see {log})' if log else ''))
    return out


def registry_dirs():
    home = Path(os.environ.get('CARGO_HOME', Path.home() / '.cargo'))
    return sorted((home / 'registry' / 'src').glob('*'))


def find_source(name, version):
    def candidates():
        for d in registry_dirs():
            yield from d.glob(f'{name}-{version or "*"}')
    found = [p for p in candidates() if (p / 'Cargo.toml').exists()
             and re.fullmatch(rf'{re.escape(name)}-\d[^/]*', p.name)]
    if version:
        return found[0] if found else None
    key = lambda p: [int(x) if x.isdigit() else x for x in re.split(r'[.+-]', p.name[len(name) + 1:])]
    return max(found, key=key) if found else None


def fetch_source(name, version, work):
    """A throwaway project depending on NAME = "=VERSION" (or "*"); cargo fetch downloads it."""
    proj = work / 'fetch'
    (proj / 'src').mkdir(parents=True, exist_ok=True)
    (proj / 'src' / 'lib.rs').write_text('')
    req = f'={version}' if version else '*'
    (proj / 'Cargo.toml').write_text(
        f'[package]\nname = "annotate-fetch"\nversion = "0.0.0"\nedition = "2021"\n\n'
        f'[dependencies]\n{name} = "{req}"\n\n[workspace]\n')
    run(['cargo', 'fetch'], cwd=proj)
    if not version:
        meta = json.loads(run(['cargo', 'metadata', '--format-version', '1'], cwd=proj, capture=True).stdout)
        version = next(p['version'] for p in meta['packages'] if p['name'] == name)
    return find_source(name, version)


def prepare_manifest(tree, runtime=None):
    """An empty [workspace] (builds standalone); annotated: the runtime dependency."""
    manifest = tree / 'Cargo.toml'
    text = manifest.read_text()
    if not re.search(r'^\[workspace\]', text, re.M):
        text += '\n[workspace]\n'
    if runtime:
        text += f'\n[dependencies.backoff-runtime]\npath = "{runtime}"\n'
        edition = re.search(r'^edition\s*=\s*"(\d+)"', text, re.M)
        if not edition or edition.group(1) == '2015':
            # ::backoff_runtime needs an `extern crate` in the 2015 edition
            for root in ('src/lib.rs', 'src/main.rs'):
                p = tree / root
                if p.exists():
                    body = p.read_text()
                    # after the inner attributes and doc comments at the top
                    m = re.match(r'(?:\s*(?://[^\n]*|#!\[[^\n]*\])\n)*', body)
                    p.write_text(body[:m.end()] + 'extern crate backoff_runtime;\n' + body[m.end():])
    manifest.write_text(text)


# ---------------------------------------------------------------------------
# Building and classifying errors

KINDS = [
    ('E0507 consumed owned argument (cannot move out of a captured variable in an FnMut closure)',
     lambda m, c: 'cannot move out of' in m and 'FnMut' in m),
    ('returns a borrow of a &mut argument (captured variable cannot escape FnMut closure body)',
     lambda m, c: 'captured variable cannot escape' in m),
    ('E0524 two closures need unique access at once', lambda m, c: c == 'E0524'),
    ('E0382 use of moved value (async: moved in previous iteration of loop)',
     lambda m, c: c == 'E0382'),
    ('E0521 stores a borrow of a captured &mut argument in a longer-lived place (borrowed data escapes outside of closure)',
     lambda m, c: c == 'E0521'),
    ("the attribute's own error", lambda m, c: c is None and ('#[retry]' in m or 'cannot be retried' in m)),
    ('E0277 a `mut` argument that is not Copy (the runtime\'s "fresh copy" message)',
     lambda m, c: c == 'E0277' and 'fresh copy' in m),
]
def kind_of(message, code):
    for label, test in KINDS:
        if test(message, code):
            return label
    norm = re.sub(r'`[^`]*`', '`_`', message)
    return f'other: {code + ": " if code else ""}{norm}'


ORIGINATES = re.compile(r'originates in the attribute macro `(::)?(backoff_runtime::)?retry`')
MARKER_RE = re.compile(rf'unused variable: `{MARKER}(\d+)`')


def span_lines(d):
    """Every (file, line) a diagnostic shows a snippet of: its spans and its
    children's (not the macro call sites behind them: rustc names those in
    a note, "this error originates in ...", without showing the line)."""
    out = set()
    for sp in d.get('spans', []):
        out.add((sp['file_name'], sp['line_start'], sp['column_start'],
                 sp['column_end'] if sp['line_end'] == sp['line_start'] else 10**9))
    for c in d.get('children', []):
        out |= span_lines(c)
    return out


def build(tree, env, cargo_args, log):
    """cargo test --no-run; returns (ok, errors, executables, marker ids
    seen: the functions rustc compiled, see marker())."""
    cmd = ['cargo', 'test', '--no-run', '--message-format=json', *cargo_args]
    p = subprocess.run(cmd, cwd=tree, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    Path(log).write_text(p.stderr + '\n' + p.stdout)
    errors, exes, seen, compiled = [], [], set(), set()
    for line in p.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get('reason') == 'compiler-message':
            d = msg['message']
            if m := MARKER_RE.search(d['message']):
                compiled.add(int(m.group(1)))
                continue
            if d['level'] != 'error' or not d['spans']:
                continue
            span = next((s for s in d['spans'] if s['is_primary']), d['spans'][0])
            key = (span['file_name'], span['line_start'], span['column_start'], d['message'])
            if key in seen:  # the lib is compiled twice: as a dependency of tests/ and as its unit tests
                continue
            seen.add(key)
            errors.append({
                'code': (d.get('code') or {}).get('code'),
                'message': d['message'],
                'file': span['file_name'],
                'line': span['line_start'],
                'rendered': d.get('rendered', ''),
                'package': msg.get('package_id', ''),
                'span_lines': span_lines(d),
            })
        elif msg.get('reason') == 'compiler-artifact' and msg.get('executable') and msg['profile']['test']:
            t = msg['target']
            label = 'lib' if 'lib' in t['kind'] else f'{t["kind"][0]}:{t["name"]}'
            exes.append((label, msg['executable']))
    return p.returncode == 0, errors, exes, compiled


def attribute(errors, functions):
    """Each error -> the innermost annotated function whose lines hold it."""
    for e in errors:
        best = None
        for f in functions:
            if f['annotated'] and f['file'] == e['file'] and f['start_line'] <= e['line'] <= f['end_line']:
                if best is None or f['end_line'] - f['start_line'] < best['end_line'] - best['start_line']:
                    best = f
        e['function'] = best['key'] + ' ' + best['name'] if best else None
        e['function_id'] = best['id'] if best else None
        # what the user sees of the attribute: its line among the spans (or
        # in the rendered snippet), and rustc's "this error originates in the
        # attribute macro `retry`"
        attr = (best['attr_col'], best['attr_col'] + len(ATTR.rstrip())) if best else None
        e['shows_attr'] = bool(best) and any(
            f == best['file'] and line == best['start_line'] and c0 < attr[1] and c1 > attr[0]
            for f, line, c0, c1 in e['span_lines'])
        e['originates'] = bool(ORIGINATES.search(e['rendered']))
        del e['span_lines']
    return errors


# ---------------------------------------------------------------------------
# Running tests one at a time, with a per-test timeout


def list_tests(exe, cwd, env):
    out = subprocess.run([exe, '--list', '--format', 'terse'], cwd=cwd, env=env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    return [l[:-len(': test')] for l in out.splitlines() if l.endswith(': test')]


def run_binary(exe, cwd, env, timeout, log):
    """{test name: 'ok' | 'FAILED' | 'ignored' | 'TIMEOUT'} for one test binary."""
    names = list_tests(exe, cwd, env)
    results, logs = {}, []
    result_re = re.compile(r'^test (.+?) \.\.\. (ok|FAILED|ignored)', re.M)
    while True:
        todo = [n for n in names if n not in results]
        if not todo:
            break
        filters = [] if len(todo) == len(names) else ['--exact', *todo]
        p = subprocess.Popen([exe, '--test-threads=1', *filters], cwd=cwd, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        buf = bytearray()
        done = threading.Event()

        def reader():
            while chunk := os.read(p.stdout.fileno(), 65536):
                buf.extend(chunk)
            done.set()

        threading.Thread(target=reader, daemon=True).start()
        current, since = None, time.monotonic()
        hung = None
        while not done.wait(0.2):
            text = buf.decode(errors='replace')
            tail = text[text.rfind('\n') + 1:]
            m = re.match(r'test (.+?) \.\.\. $', tail)
            running = m.group(1) if m else None
            if running != current:
                current, since = running, time.monotonic()
            elif running and time.monotonic() - since > timeout:
                hung = running
                p.kill()
                break
        p.wait()
        done.wait(5)
        text = buf.decode(errors='replace')
        logs.append(text)
        for name, outcome in result_re.findall(text):
            results[name] = outcome
        if hung:
            results[hung] = 'TIMEOUT'
            logs.append(f'\n*** {hung}: stopped after {timeout}s ***\n')
        elif any(n not in results for n in todo):
            # crashed (abort, segfault): the test that was running
            missing = [n for n in todo if n not in results]
            tail = text[text.rfind('\n') + 1:]
            m = re.match(r'test (.+?) \.\.\. ', tail)
            crashed = m.group(1) if m and m.group(1) in missing else missing[0]
            results[crashed] = f'CRASHED (exit {p.returncode})'
    Path(log).write_text(''.join(logs))
    return results


def no_harness_targets(tree):
    """Names of the [[test]] targets with `harness = false` (their own main)."""
    manifest = tomllib.loads((tree / 'Cargo.toml').read_text())
    return {t.get('name') for t in manifest.get('test', []) if t.get('harness') is False}


def run_whole(exe, cwd, env, timeout, log):
    """A `harness = false` binary: one run, its exit status, its output."""
    try:
        p = subprocess.run([exe], cwd=cwd, env=env, text=True, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout)
        outcome, out = ('ok' if p.returncode == 0 else f'FAILED (exit {p.returncode})'), p.stdout
    except subprocess.TimeoutExpired as e:
        outcome, out = 'TIMEOUT', (e.stdout or b'').decode(errors='replace')
    Path(log).write_text(out)
    return outcome


def run_tests(tree, exes, env, timeout, logdir, tag):
    results, start = {}, time.monotonic()
    whole = no_harness_targets(tree)
    for label, exe in exes:
        safe = re.sub(r'[^A-Za-z0-9_.-]', '_', label)
        log = logdir / f'{tag}-test-{safe}.log'
        if label.split(':', 1)[-1] in whole and label != 'lib':
            results[f'{label} (harness = false, whole binary)'] = run_whole(exe, tree, env, timeout * 10, log)
            continue
        for name, outcome in run_binary(exe, tree, env, timeout, log).items():
            results[f'{label} {name}'] = outcome
    return results, time.monotonic() - start


def new_output_lines(logdir, label, limit=20):
    """Lines a whole-binary test printed annotated but not baseline."""
    safe = re.sub(r'[^A-Za-z0-9_.-]', '_', label)
    try:
        b = set((logdir / f'baseline-test-{safe}.log').read_text().splitlines())
        a = (logdir / f'annotated-test-{safe}.log').read_text().splitlines()
    except OSError:
        return []
    return [l for l in a if l not in b and l.strip()][:limit]


def failure_excerpt(logdir, tag, label, name, limit=12):
    """The captured output of one failing test, from its binary's log."""
    safe = re.sub(r'[^A-Za-z0-9_.-]', '_', label)
    p = logdir / f'{tag}-test-{safe}.log'
    if not p.exists():
        return ''
    text = p.read_text()
    m = re.search(rf'^---- {re.escape(name)} stdout ----\n(.*?)(?=^----|^failures:|\Z)', text, re.M | re.S)
    if not m:
        return ''
    lines = m.group(1).strip().split('\nstack backtrace:')[0].splitlines()
    return '\n'.join(lines[:limit])


# ---------------------------------------------------------------------------


def main():
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('name')
    ap.add_argument('version', nargs='?')
    ap.add_argument('--runtime', default=str(here.parent / 'backoff-runtime'),
                    help='path of backoff-runtime (default: this repository\'s)')
    ap.add_argument('--work', help='work dir (default /tmp/annotate/NAME-VERSION)')
    ap.add_argument('--target-dir', default='/tmp/annotate/target', help='shared CARGO_TARGET_DIR')
    ap.add_argument('--skip-failing', action='store_true',
                    help='take #[retry] off functions that fail to compile, until the crate builds')
    ap.add_argument('--annotate-only', action='store_true', help='stop after annotating')
    ap.add_argument('--no-tests', action='store_true', help='build only')
    ap.add_argument('--test-timeout', type=float, default=60, help='seconds one test may run (default 60)')
    ap.add_argument('--jobs', '-j', default='2', help='cargo -j (default 2)')
    ap.add_argument('--cargo-args', default='--lib --tests',
                    help='targets and features for cargo test (default "--lib --tests")')
    ap.add_argument('--features', help='features to build with (added to --cargo-args as --features FEATURES); '
                    'only the functions these compile are counted as compiled')
    ap.add_argument('--no-default-features', action='store_true', help='added to --cargo-args')
    args = ap.parse_args()
    if args.features:
        args.cargo_args += f' --features {args.features}'
    if args.no_default_features:
        args.cargo_args += ' --no-default-features'

    t0 = time.monotonic()
    src = find_source(args.name, args.version)
    if src is None:
        tmp = Path(args.work or f'/tmp/annotate/{args.name}-{args.version or "latest"}')
        src = fetch_source(args.name, args.version, tmp)
        if src is None:
            sys.exit(f'{args.name} {args.version or ""}: not found after cargo fetch')
    version = src.name[len(args.name) + 1:]
    work = Path(args.work or f'/tmp/annotate/{args.name}-{version}')
    base, ann, logdir = work / 'baseline', work / 'annotated', work / 'logs'
    print(f'== {args.name} {version}: {src} -> {work}')
    for d in (base, ann, logdir):
        if d.exists():
            shutil.rmtree(d)
    logdir.mkdir(parents=True)
    for d in (base, ann):
        shutil.copytree(src, d, symlinks=True)
        for extra in ('Cargo.toml.orig', '.cargo_vcs_info.json', '.cargo-ok'):
            if (d / extra).exists():
                (d / extra).unlink()
    runtime = Path(args.runtime).resolve()
    prepare_manifest(base)
    prepare_manifest(ann, runtime)

    env = dict(os.environ, CARGO_TARGET_DIR=args.target_dir, CARGO_BUILD_JOBS=str(args.jobs), RUST_BACKTRACE='0')
    cargo_args = args.cargo_args.split()
    clean_ann = work / 'annotated.clean'  # the unannotated sources, for re-annotating
    if clean_ann.exists():
        shutil.rmtree(clean_ann)
    shutil.copytree(ann / 'src', clean_ann)

    skip = set()
    functions = annotate(ann, skip, markers=True)
    first_pass = functions  # the candidates of pass 1, every one annotated but those left alone
    annotated = [f for f in functions if f['annotated']]
    skipped = {}
    for f in functions:
        if f['skip']:
            skipped[f['skip']] = skipped.get(f['skip'], 0) + 1
    n_async = sum(f['async'] for f in annotated)
    print(f'functions annotated: {len(annotated)} ({n_async} async) in {len({f["file"] for f in annotated})} files'
          + (f'; left alone: {", ".join(f"{v} {k}" for k, v in skipped.items())}' if skipped else ''))
    report = {'crate': args.name, 'version': version, 'annotated': len(annotated), 'async': n_async,
              'left_alone': skipped, 'functions': [f'{f["key"]} {f["name"]}' for f in annotated]}
    if args.annotate_only:
        (work / 'report.json').write_text(json.dumps(report, indent=1))
        return

    # a lockfile shared by both copies, so they build the same dependency versions
    if not (base / 'Cargo.lock').exists():
        run(['cargo', 'generate-lockfile'], cwd=base, env=env)
    shutil.copy(base / 'Cargo.lock', ann / 'Cargo.lock')

    print('building baseline ...', flush=True)
    ok, errs, base_exes, _ = build(base, env, cargo_args, logdir / 'baseline-build.log')
    if not ok:
        sys.exit(f'baseline does not build: see {logdir / "baseline-build.log"}')

    all_errors, iteration, compiled = [], 0, set()
    while True:
        iteration += 1
        print(f'building annotated (pass {iteration}, {sum(f["annotated"] for f in functions)} functions) ...', flush=True)
        ok, errs, ann_exes, seen = build(ann, env, cargo_args, logdir / f'annotated-build-{iteration}.log')
        attribute(errs, functions)
        all_errors += errs
        compiled |= seen | {e['function_id'] for e in errs if e['function_id'] is not None}
        if iteration == 1:
            print(f'annotated copy compiles: {"yes" if ok else "no"}')
            report['compiles'] = ok
        if ok or not args.skip_failing:
            break
        failing = {e['function'].split(' ')[0] for e in errs if e['function']}
        if not failing - skip:
            print('errors outside annotated functions: cannot go on', file=sys.stderr)
            break
        skip |= failing
        shutil.rmtree(ann / 'src')
        shutil.copytree(clean_ann, ann / 'src')
        functions = annotate(ann, skip, markers=True)

    if not ok:
        # a build that failed may have stopped before the lints of the
        # functions that did compile: ask again with the markers only
        print('building with the markers only (to count the functions compiled) ...', flush=True)
        shutil.rmtree(ann / 'src')
        shutil.copytree(clean_ann, ann / 'src')
        annotate(ann, {f['key'] for f in first_pass}, markers=True)
        _, _, _, seen = build(ann, env, cargo_args, logdir / 'markers-only-build.log')
        compiled |= seen
        shutil.rmtree(ann / 'src')
        shutil.copytree(clean_ann, ann / 'src')
        annotate(ann, skip, markers=True)

    # the functions annotated in pass 1 that rustc compiled (under the features chosen)
    comp = [f for f in first_pass if f['annotated'] and f['id'] in compiled]
    c_async = sum(f['async'] for f in comp)
    failed = {e['function_id'] for e in all_errors if e['function_id'] is not None}
    print(f'\nannotated {len(annotated)} ({n_async} async); compiled {len(comp)}: {c_async} async, '
          f'{len(comp) - c_async} sync ({len(annotated) - len(comp)} not compiled with {" ".join(cargo_args)}); '
          f'do not compile: {len(failed)} ({sum(f["async"] for f in comp if f["id"] in failed)} async)')
    report.update(cargo_args=cargo_args, compiled=len(comp), compiled_async=c_async,
                  compiled_functions=[f'{f["key"]} {f["name"]}' for f in comp],
                  not_compiled=[f'{f["key"]} {f["name"]}' for f in annotated if f['id'] not in compiled],
                  failing_functions=len(failed))

    if all_errors:
        kinds = {}
        for e in all_errors:
            k = kinds.setdefault(kind_of(e['message'], e['code']),
                                 {'count': 0, 'shows_attr': 0, 'originates': 0, 'functions': {}, 'example': None})
            k['count'] += 1
            k['shows_attr'] += e['shows_attr']
            k['originates'] += e['originates']
            fn = e['function'] or f'(outside annotated functions) {e["file"]}:{e["line"]}'
            k['functions'][fn] = k['functions'].get(fn, 0) + 1
            if k['example'] is None:
                k['example'] = f'{fn}: {e["message"]}'
        print(f'\ncompile errors: {len(all_errors)} in {len({e["function"] for e in all_errors})} functions')
        for label, k in sorted(kinds.items(), key=lambda kv: -kv[1]['count']):
            print(f'  {k["count"]:4}  {label}; shows the #[retry] line: {k["shows_attr"]}, '
                  f'"originates in the attribute macro `retry`": {k["originates"]}')
            for fn, n in k['functions'].items():
                print(f'          {fn}' + (f' (x{n})' if n > 1 else ''))
        report['compile_errors'] = kinds
        report['skipped_failing'] = sorted(skip)
        (work / 'errors.txt').write_text('\n\n'.join(f'{e["function"]}\n{e["rendered"]}' for e in all_errors))
        print(f'  (rendered: {work / "errors.txt"})')
    if not ok:
        (work / 'report.json').write_text(json.dumps(report, indent=1))
        print(f'\nannotated copy does not compile{"" if args.skip_failing else "; rerun with --skip-failing"}')
        print(f'time: {time.monotonic() - t0:.0f}s')
        sys.exit(1)
    if skip:
        print(f'builds with {sum(f["annotated"] for f in functions)} functions annotated '
              f'({len(skip)} left without the attribute)')
    report['annotated_after_skips'] = sum(f['annotated'] for f in functions)

    if args.no_tests:
        (work / 'report.json').write_text(json.dumps(report, indent=1))
        return
    print('running baseline tests ...', flush=True)
    base_res, base_t = run_tests(base, base_exes, env, args.test_timeout, logdir, 'baseline')
    print('running annotated tests ...', flush=True)
    ann_res, ann_t = run_tests(ann, ann_exes, env, args.test_timeout, logdir, 'annotated')

    def count(res):
        c = {}
        for v in res.values():
            c[v.split(' ')[0]] = c.get(v.split(' ')[0], 0) + 1
        return ', '.join(f'{n} {k}' for k, n in sorted(c.items()))

    print(f'\ntests, baseline:  {count(base_res)} ({base_t:.1f}s)')
    print(f'tests, annotated: {count(ann_res)} ({ann_t:.1f}s)')
    changed = []
    for name in sorted(set(base_res) | set(ann_res)):
        b, a = base_res.get(name, 'absent'), ann_res.get(name, 'absent')
        if b != a:
            changed.append({'test': name, 'baseline': b, 'annotated': a})
    if changed:
        print(f'tests whose outcome changed: {len(changed)}')
        for c in changed:
            print(f'  {c["test"]}: {c["baseline"]} -> {c["annotated"]}')
            label, _, tname = c['test'].partition(' ')
            if tname.startswith('(harness = false'):
                excerpt = '\n'.join(new_output_lines(logdir, label))
            else:
                excerpt = failure_excerpt(logdir, 'annotated', label, tname) if c['annotated'] == 'FAILED' else ''
            c['output'] = excerpt
            for line in excerpt.splitlines()[:20]:
                print(f'      | {line}')
    else:
        print('tests whose outcome changed: none')
    report.update(tests_baseline=base_res, tests_annotated=ann_res, changed=changed,
                  test_seconds={'baseline': round(base_t, 1), 'annotated': round(ann_t, 1)})
    (work / 'report.json').write_text(json.dumps(report, indent=1))
    print(f'\ntime: {time.monotonic() - t0:.0f}s; logs in {logdir}, report in {work / "report.json"}')


if __name__ == '__main__':
    main()
