#!/usr/bin/env python3
"""Checks that every public initializer with parameters documents each of them.

A `public`/`open` `init`, `init?` or `init!` (also `convenience`, `required`, `override`, `nonisolated`) in
Sources/ and Integrations/*/Sources/ must be preceded by a `///` comment naming every parameter, by its local
name, either as `- Parameter name:` or as an item `- name:` of a `- Parameters:` list, and name no parameter it
does not have. Public static factory
functions in Sources/ResiliencePolicies/Presets/ are held to the same rule.

Usage: python3 .ci/initializer-docs.py [--list] [ROOT]
Prints one line per declaration with a missing parameter doc and exits 1 when there is any.
"""

import os
import re
import sys

DECLARATION = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:public|open)\s+"
    r"(?:(?:convenience|required|override|nonisolated|final|static|@\w+)\s+)*"
    r"(?P<kind>init[?!]?|func\s+(?P<name>[A-Za-z_]\w*))\s*(?:<[^()]*?>)?\s*\("
)
PARAMETER_LINE = re.compile(r"^\s*-\s+Parameter\s+(\w+)\s*:")
PARAMETERS_HEADER = re.compile(r"^\s*-\s+Parameters\s*:")
LIST_ITEM = re.compile(r"^(\s*)-\s+(\w+)\s*:")


def source_files(root):
    """Swift files under Sources/ and every Integrations/*/Sources/."""
    directories = [os.path.join(root, "Sources")]
    integrations = os.path.join(root, "Integrations")
    if os.path.isdir(integrations):
        for name in sorted(os.listdir(integrations)):
            directories.append(os.path.join(integrations, name, "Sources"))
    for directory in directories:
        for folder, subfolders, files in os.walk(directory):
            subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
            for name in sorted(files):
                if name.endswith(".swift"):
                    yield os.path.join(folder, name)


def strip_strings_and_comments(text):
    """The text with string literal contents and `//` comments blanked (lengths kept)."""
    out = []
    index = 0
    in_string = False
    while index < len(text):
        char = text[index]
        if in_string:
            if char == "\\":
                out.append("  ")
                index += 2
                continue
            if char == '"':
                in_string = False
                out.append(char)
            else:
                out.append(" " if char != "\n" else char)
        elif char == '"':
            in_string = True
            out.append(char)
        elif text.startswith("//", index):
            end = text.find("\n", index)
            end = len(text) if end < 0 else end
            out.append(" " * (end - index))
            index = end
            continue
        else:
            out.append(char)
        index += 1
    return "".join(out)


def parameter_list(text, open_index):
    """The text between the parenthesis at `open_index` and its match."""
    depth = 0
    for index in range(open_index, len(text)):
        char = text[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return text[open_index + 1 : index]
    raise ValueError("unbalanced parentheses")


def split_top_level(parameters):
    """Splits a parameter list at commas outside (), [], {} and generic <>."""
    parts, current, depth, angle = [], [], 0, 0
    index = 0
    while index < len(parameters):
        char = parameters[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "-" and parameters.startswith("->", index):
            current.append("->")
            index += 2
            continue
        elif char == "<" and index > 0 and (parameters[index - 1].isalnum() or parameters[index - 1] == "_"):
            angle += 1  # a generic argument list (`Set<String>`), not a comparison or a shift
        elif char == ">" and angle > 0:
            angle -= 1
        if char == "," and depth == 0 and angle == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    if "".join(current).strip():
        parts.append("".join(current))
    return parts


def local_names(parameters):
    """The local names of the parameters (`_ value: T` → `value`, `from source: T` → `source`)."""
    names = []
    for part in split_top_level(parameters):
        head = part.split(":", 1)[0].strip()
        head = re.sub(r"@\w+(\([^)]*\))?", "", head).strip()
        if not head:
            continue
        words = head.split()
        names.append(words[-1].strip("`"))
    return [name for name in names if name != "_"]


def documented_names(doc_lines):
    """Parameter names a doc comment documents."""
    names = set()
    in_list = False
    list_indent = None
    for line in doc_lines:
        body = line.strip()[3:]
        match = PARAMETER_LINE.match(body)
        if match:
            names.add(match.group(1))
            in_list = False
            continue
        if PARAMETERS_HEADER.match(body):
            in_list, list_indent = True, None
            continue
        if in_list:
            item = LIST_ITEM.match(body)
            if item:
                indent = len(item.group(1))
                if list_indent is None:
                    list_indent = indent
                if indent == list_indent:
                    names.add(item.group(2))
                    continue
            if body.strip() and (list_indent is None or len(body) - len(body.lstrip()) < (list_indent or 0)):
                in_list = False
    return names


def doc_comment_above(lines, line_index):
    """The `///` lines directly above the declaration (skipping attribute-only lines)."""
    index = line_index - 1
    while index >= 0 and re.match(r"^\s*@\w+(\([^)]*\))?\s*$", lines[index]):
        index -= 1
    doc = []
    while index >= 0 and lines[index].lstrip().startswith("///"):
        doc.append(lines[index])
        index -= 1
    return list(reversed(doc))


def check_file(path, root):
    with open(path, encoding="utf-8") as handle:
        original = handle.read()
    text = strip_strings_and_comments(original)
    lines = original.split("\n")
    relative = os.path.relpath(path, root)
    in_presets = "/ResiliencePolicies/Presets/" in "/" + relative.replace(os.sep, "/")
    findings = []
    offset = 0
    for line_index, line in enumerate(text.split("\n")):
        match = DECLARATION.match(line)
        if match:
            is_function = match.group("kind").startswith("func")
            wanted = not is_function or (in_presets and re.search(r"\bstatic\b", line))
            if wanted:
                open_index = offset + match.end() - 1
                names = local_names(parameter_list(text, open_index))
                if names:
                    documented = documented_names(doc_comment_above(lines, line_index))
                    missing = [name for name in names if name not in documented]
                    unknown = sorted(documented - set(names))
                    if missing or unknown:
                        label = "init" if not is_function else match.group("name")
                        findings.append((relative, line_index + 1, label, missing, unknown))
        offset += len(line) + 1
    return findings


def main(arguments):
    listing = "--list" in arguments
    positional = [argument for argument in arguments if not argument.startswith("--")]
    root = positional[0] if positional else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    root = os.path.abspath(root)
    findings = []
    for path in source_files(root):
        findings.extend(check_file(path, root))
    for relative, line, label, missing, unknown in findings:
        problems = []
        if missing:
            problems.append(f"does not document: {', '.join(missing)}")
        if unknown:
            problems.append(f"documents parameters it does not have: {', '.join(unknown)}")
        print(f"{relative}:{line}: public {label}(…) {'; '.join(problems)}")
    parameters = sum(len(missing) for _, _, _, missing, _ in findings)
    print(f"{len(findings)} public initializers/preset factories with parameter docs missing or stale "
          f"({parameters} undocumented parameters)")
    if listing:
        return 0
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
