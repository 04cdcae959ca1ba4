#!/usr/bin/env python3
"""The file-level call graph of a folder of C files, and its circles.

A module (X.c with X.h) calls another when a function (or function-like macro) defined in the first uses a
function defined in the second. A header alone is a module too: an inline in internal.h that
calls back into life.c is an edge like any other. Prints the strongly connected components of
more than one module and the edges inside them, and any circle of #includes between the
folder's files; with --check, exits 1 when there is any.

    scripts/callgraph.py cache            # the circles, if any
    scripts/callgraph.py --check cache    # for `make test`
    scripts/callgraph.py --edges cache    # every file-to-file edge with the calls behind it
"""
import os
import re
import sys

DEF = re.compile(r'^(?:static\s+)?(?:inline\s+)?(?:AG_[A-Z_]+\s+)*[A-Za-z_][\w\s\*]*?\b([A-Za-z_]\w*)\s*\(([^;{]*)\)\s*$')
MACRO = re.compile(r'^#\s*define\s+([A-Za-z_]\w*)\(')
CALL = re.compile(r'\b([A-Za-z_]\w*)\s*\(')
KEYWORDS = {'if', 'for', 'while', 'switch', 'return', 'sizeof', 'defined', '_Alignof',
            'alignof', 'do', 'case', 'else', '__attribute__', '_Static_assert',
            'static_assert', 'offsetof', '__builtin_expect'}


def strip(text):
    text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), text, flags=re.S)
    text = re.sub(r'//[^\n]*', '', text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return text


def bodies(path):
    """(name, body) for each function defined in path, and each function-like macro."""
    lines = strip(open(path, encoding='utf-8', errors='replace').read()).split('\n')
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = MACRO.match(line)
        if m:
            body = line
            while body.endswith('\\') and i + 1 < len(lines):
                i += 1
                body += lines[i]
            out.append((m.group(1), body[m.end():]))
            i += 1
            continue
        # a definition: a header (possibly over several lines) then '{' at column 0
        if line and not line[0].isspace() and not line.startswith('#') and '(' in line:
            head = line
            j = i
            while ')' not in head.split('(', 1)[1] or head.count('(') > head.count(')'):
                j += 1
                if j >= len(lines):
                    break
                head += ' ' + lines[j].strip()
            if j + 1 < len(lines) and lines[j + 1].startswith('{') and not head.rstrip().endswith(';'):
                head = re.sub(r'__attribute__\s*\(\(.*?\)\)', '', head)
                m = re.search(r'\b([A-Za-z_]\w*)\s*\(', head)
                name = m.group(1) if m else None
                k = j + 1
                depth = 0
                body = []
                while k < len(lines):
                    depth += lines[k].count('{') - lines[k].count('}')
                    body.append(lines[k])
                    if depth == 0:
                        break
                    k += 1
                if name:
                    out.append((name, '\n'.join(body)))
                i = k + 1
                continue
        i += 1
    return out


def module(f):
    """X.c and X.h are one module: a header's inlines belong with the file it declares."""
    return f.rsplit('.', 1)[0]


def graph(folder):
    files = sorted(f for f in os.listdir(folder) if f.endswith(('.c', '.h')))
    defs = {}      # function -> file
    funcs = {}     # file -> [(name, body)]
    for f in files:
        funcs[f] = bodies(os.path.join(folder, f))
        for name, _ in funcs[f]:
            # a .c definition wins over a header's macro of the same name
            if name not in defs or f.endswith('.c'):
                defs[name] = module(f)
    edges = {}     # (from, to) -> set of 'caller -> callee'
    for f in files:
        for name, body in funcs[f]:
            for callee in set(CALL.findall(body)):
                if callee in KEYWORDS or callee == name:
                    continue
                g = defs.get(callee)
                if g and g != module(f):
                    edges.setdefault((module(f), g), set()).add(f'{name} -> {callee}')
    return sorted({module(f) for f in files}), edges


def includes(folder):
    """File-to-file #include edges between the folder's own files."""
    files = sorted(f for f in os.listdir(folder) if f.endswith(('.c', '.h')))
    base = os.path.basename(os.path.normpath(folder))
    edges = {}
    for f in files:
        for m in re.finditer(r'^#\s*include\s+"(?:' + re.escape(base) + r'/)?([^"/]+)"',
                             open(os.path.join(folder, f), encoding='utf-8').read(), re.M):
            if m.group(1) in files and m.group(1) != f:
                edges[(f, m.group(1))] = {'#include'}
    return files, edges


def sccs(nodes, edges):
    adj = {n: [] for n in nodes}
    for a, b in edges:
        adj[a].append(b)
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in adj[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for n in nodes:
        if n not in index:
            visit(n)
    return [c for c in out if len(c) > 1]


def main(argv):
    check = '--check' in argv
    show_edges = '--edges' in argv
    args = [a for a in argv if not a.startswith('--')]
    folder = args[0] if args else 'cache'
    files, edges = graph(folder)
    if show_edges:
        for (a, b), calls in sorted(edges.items()):
            print(f'{a} -> {b}: {", ".join(sorted(calls))}')
    circles = sccs(files, edges)
    for c in circles:
        print(f'circle of {len(c)} files: {" ".join(c)}')
        for (a, b), calls in sorted(edges.items()):
            if a in c and b in c:
                print(f'  {a} -> {b}: {", ".join(sorted(calls))}')
    ifiles, iedges = includes(folder)
    icircles = sccs(ifiles, iedges)
    for c in icircles:
        print(f'circle of includes: {" ".join(c)}')
    if not circles and not icircles:
        print(f'{folder}: {len(files)} modules, {len(edges)} module-to-module call edges, '
              f'{len(iedges)} includes, no circle')
    return 1 if (check and (circles or icircles)) else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
