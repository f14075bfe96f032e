#!/usr/bin/env python3
"""Checks that every relative link in README.md and docs/*.md points to an
existing file and, with a #fragment, to a heading of that file (GitHub's
anchor rules: lower case, punctuation dropped, spaces to hyphens)."""
import glob, os, re, sys
root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
os.chdir(root)
def anchors(path):
    out, seen = set(), {}
    fence = False
    for line in open(path, encoding='utf-8'):
        if line.startswith('```'):
            fence = not fence
        if fence: continue
        m = re.match(r'^(#{1,6})\s+(.*?)\s*#*\s*$', line)
        if not m: continue
        a = m.group(2).strip().lower()
        a = re.sub(r'[^\w\- ]', '', a)   # drop punctuation (keeps letters, digits, _, -, space)
        a = a.replace(' ', '-')
        n = seen.get(a, 0); seen[a] = n + 1
        out.add(a if n == 0 else f'{a}-{n}')
    return out
bad = 0
files = ['README.md'] + sorted(glob.glob('docs/*.md'))
for f in files:
    text = open(f, encoding='utf-8').read()
    # skip indented code blocks and inline code
    lines = [l for l in text.split('\n') if not l.startswith('    ')]
    text = re.sub(r'`[^`\n]*`', '', '\n'.join(lines))
    for m in re.finditer(r'\[[^\]]*\]\(([^)\s]+)\)', text):
        link = m.group(1)
        if re.match(r'^[a-z]+:', link): continue
        path, _, frag = link.partition('#')
        target = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
        if not os.path.exists(target):
            print(f'{f}: {link}: no file {target}'); bad += 1; continue
        if frag:
            if not target.endswith('.md'):
                print(f'{f}: {link}: fragment on a non-markdown file'); bad += 1; continue
            if frag not in anchors(target):
                print(f'{f}: {link}: no heading #{frag} in {target}'); bad += 1
print(f'{len(files)} files checked, {bad} bad links')
sys.exit(1 if bad else 0)
