#!/usr/bin/env bash
# Writes a man page (section 1) from a command's --help text, so that the
# pages say what --help says and need no tool beyond bash and sed (help2man
# is not required).  Runs at build time, in the user's shell.
#
#   scripts/mkman.sh OUT NAME VERSION COMMAND [ARGS...]
#
# COMMAND ARGS --help is run; its text becomes:
#   NAME         NAME \- the first sentence of the description
#   SYNOPSIS     the "usage:" lines
#   DESCRIPTION  the paragraphs before the first "Heading:" line
#   HEADING      one section per "Heading:" line at the left margin
#                (Options:, Commands:, Examples:, ...), kept as laid out
# Exits non-zero, writing nothing, when COMMAND fails or prints no usage line.

set -eu

out=${1:?usage: mkman.sh OUT NAME VERSION COMMAND [ARGS...]}
name=${2:?}
version=${3:?}
shift 3
help=$("$@" --help) || {
	echo "mkman: '$* --help' failed" >&2
	exit 1
}
case $help in
[Uu]sage:*) ;;
*)
	echo "mkman: '$* --help' does not start with a usage line" >&2
	exit 1
	;;
esac

# Text for roff: backslashes escaped, a leading '.' or "'" made literal.
esc() {
	sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"
}

tmp=$out.tmp
{
	printf '.TH %s 1 "" "gpuprof %s" "User Commands"\n' "$(printf '%s' "$name" | tr a-z A-Z)" "$version"
	# The description's first sentence names the page.
	summary=$(printf '%s\n' "$help" | awk '
		/^[Uu]sage:/ || /^       / && !started { next }
		/^$/ { if (started) exit; next }
		/^[A-Z][A-Za-z ]*:$/ { exit }
		{ started = 1; printf "%s ", $0 }' |
		sed -e 's/\.  .*//' -e 's/\. .*//' -e 's/[. ]*$//')
	[ -n "$summary" ] || summary="the gpuprof CUDA profiler"
	printf '.SH NAME\n%s \\- %s\n' "$name" "$(printf '%s' "$summary" | esc)"
	printf '.SH SYNOPSIS\n.nf\n'
	printf '%s\n' "$help" | awk '
		/^[Uu]sage: / { sub(/^[Uu]sage: /, ""); print; u = 1; next }
		u && /^       [^ ]/ { sub(/^ +/, ""); print; next }
		{ exit }' | esc
	printf '.fi\n'
	# The rest: paragraphs until the first heading, then a section per heading.
	printf '%s\n' "$help" | awk '
		!body && (/^[Uu]sage: / || /^       [^ ]/ || /^$/) { next }
		{ body = 1 }
		/^[A-Z][A-Za-z ,()-]*:$/ {
			if (opened) print ".fi"
			h = toupper(substr($0, 1, length($0) - 1))
			print ".SH " h
			print ".nf"
			opened = 1
			next
		}
		# Before the first heading: the description, filled.
		!opened {
			if (!desc) { print ".SH DESCRIPTION"; desc = 1 }
			if ($0 == "") gap = 1; else { if (gap) print ".PP"; gap = 0; print $0 }
			next
		}
		{ if ($0 == "") print ".sp"; else print $0 }
		END { if (opened) print ".fi" }' | sed '/^\.\(SH\|nf\|fi\|sp\|PP\)\( \|$\)/!{s/\\/\\e/g; s/^\([.'"'"']\)/\\\&\1/}'
	printf '.SH SEE ALSO\n'
	printf 'gpuprof(1); /usr/share/doc/gpuprof or PREFIX/share/doc/gpuprof: USAGE.md, FORMAT.md\n'
} >"$tmp"
# A page that opens with an empty section or has no synopsis is a bug here.
grep -q '^\.SH SYNOPSIS' "$tmp" || {
	rm -f "$tmp"
	echo "mkman: no synopsis for $name" >&2
	exit 1
}
mv "$tmp" "$out"
