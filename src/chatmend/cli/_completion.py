"""`chatmend completion bash|zsh|fish`: a shell completion script, written from the argument parser itself (the
commands, their options, and the values of the options that take a fixed set: formats, providers, ...).

    eval "$(chatmend completion bash)"      # in ~/.bashrc
    eval "$(chatmend completion zsh)"       # in ~/.zshrc (zsh runs the bash script through bashcompinit)
    chatmend completion fish > ~/.config/fish/completions/chatmend.fish
"""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass, field

__all__ = ["SHELLS", "Command", "commands_of", "script"]

SHELLS = ("bash", "zsh", "fish")


@dataclass
class Command:
    """What completion needs of one subcommand."""

    name: str
    help: str
    options: list[str] = field(default_factory=list)
    """Every option string (`-o`, `--output`, ...)."""
    values: dict[str, list[str]] = field(default_factory=dict)
    """The values of each option that takes one of a fixed set."""
    takes_value: set[str] = field(default_factory=set)
    """The options followed by a value (a file, a number: completed as a file name)."""
    positional: list[str] = field(default_factory=list)
    """The fixed values of its positional argument, when it has some (`completion`'s shells)."""


def commands_of(parser: argparse.ArgumentParser) -> list[Command]:
    """The subcommands of the `chatmend` parser, in the order `--help` lists them."""
    found: list[Command] = []
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
        for name, sub in action.choices.items():
            command = Command(name, helps.get(name, ""))
            for option in sub._actions:
                if not option.option_strings:
                    if option.choices:
                        command.positional = [str(c) for c in option.choices]
                    continue
                command.options += option.option_strings
                if option.nargs != 0:
                    command.takes_value.update(option.option_strings)
                if option.choices:
                    for text in option.option_strings:
                        command.values[text] = [str(c) for c in option.choices]
            found.append(command)
    return found


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    """The completion script for `shell`."""
    commands = commands_of(parser)
    if shell == "fish":
        return _fish(commands)
    text = _bash(commands)
    if shell == "zsh":
        return "autoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n" + text
    return text


def _words(items: list[str]) -> str:
    return shlex.quote(" ".join(items))


def _bash(commands: list[Command]) -> str:
    cases = []
    for command in commands:
        values = "".join(f"            {shlex.quote(o)}) COMPREPLY=($(compgen -W {_words(v)} -- \"$cur\")); return;;\n"
                         for o, v in command.values.items())
        others = sorted(command.takes_value - set(command.values))
        if others:
            files = "|".join(shlex.quote(o) for o in others)
            values += f"            {files}) COMPREPLY=($(compgen -f -- \"$cur\")); return;;\n"
        positional = (f"COMPREPLY=($(compgen -W {_words(command.positional)} -- \"$cur\"))" if command.positional
                      else "COMPREPLY=($(compgen -f -- \"$cur\"))")
        cases.append(
            f"        {shlex.quote(command.name)})\n"
            f"            case \"$prev\" in\n{values}            esac\n"
            f"            if [[ \"$cur\" == -* ]]; then"
            f" COMPREPLY=($(compgen -W {_words(command.options)} -- \"$cur\")); else {positional}; fi;;\n")
    names = [c.name for c in commands]
    return (
        "# chatmend completion for bash: eval \"$(chatmend completion bash)\"\n"
        "_chatmend() {\n"
        "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
        "    if [[ $COMP_CWORD -eq 1 ]]; then\n"
        f"        COMPREPLY=($(compgen -W {_words([*names, '--help', '--version'])} -- \"$cur\")); return\n"
        "    fi\n"
        "    case \"${COMP_WORDS[1]}\" in\n"
        + "".join(cases) +
        "    esac\n"
        "}\n"
        "complete -o filenames -o bashdefault -F _chatmend chatmend\n")


def _fish_text(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish(commands: list[Command]) -> str:
    names = " ".join(c.name for c in commands)
    lines = ["# chatmend completion for fish: chatmend completion fish > ~/.config/fish/completions/chatmend.fish",
             "complete -c chatmend -f"]
    for command in commands:
        lines.append(f"complete -c chatmend -n 'not __fish_seen_subcommand_from {names}' -a {command.name} "
                     f"-d {_fish_text(command.help)}")
        when = f"-n '__fish_seen_subcommand_from {command.name}'"
        if command.positional:
            lines.append(f"complete -c chatmend {when} -a {_fish_text(' '.join(command.positional))}")
        elif command.name not in ("formats", "completion"):
            lines.append(f"complete -c chatmend {when} -F")
        for option in command.options:
            flag = f"-l {option[2:]}" if option.startswith("--") else f"-s {option[1:]}"
            if option in command.values:
                lines.append(f"complete -c chatmend {when} {flag} -x -a {_fish_text(' '.join(command.values[option]))}")
            elif option in command.takes_value:
                lines.append(f"complete -c chatmend {when} {flag} -r -F")
            else:
                lines.append(f"complete -c chatmend {when} {flag}")
    return "\n".join(lines) + "\n"
