# bash completion for gpuprof, installed as
# PREFIX/share/bash-completion/completions/gpuprof.  Runs in the user's
# interactive shell.  Commands and options are read from gpuprof's own
# --help texts, so they stay what the program takes.

_gpuprof() {
	local cur=${COMP_WORDS[COMP_CWORD]} gp=${COMP_WORDS[0]} cmd=${COMP_WORDS[1]:-} i
	COMPREPLY=()
	if [ "$COMP_CWORD" -eq 1 ]; then
		local cmds
		cmds=$("$gp" --help 2>/dev/null | sed -n '/^Commands:/,/^$/p' |
			awk '/^  [a-z]/ { print $1 }')
		mapfile -t COMPREPLY < <(compgen -W "$cmds --help --version" -- "$cur")
		return
	fi
	# After run's program, the words are the program's: files.
	if [ "$cmd" = run ]; then
		for ((i = 2; i < COMP_CWORD; i++)); do
			case ${COMP_WORDS[i]} in
			--) return ;;
			-o | --output) ((i++)) ;;
			-*) ;;
			*) return ;;
			esac
		done
		if [[ $cur != -* ]] && [ "${COMP_WORDS[COMP_CWORD - 1]}" != -o ] &&
			[ "${COMP_WORDS[COMP_CWORD - 1]}" != --output ]; then
			mapfile -t COMPREPLY < <(compgen -c -- "$cur")
			return
		fi
	fi
	case $cur in
	-*)
		local opts
		opts=$("$gp" "$cmd" --help 2>/dev/null | grep -oE -- '(^|[ ,])--?[a-zA-Z][a-zA-Z0-9-]*' |
			sed 's/^[ ,]*//' | sort -u)
		mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
		;;
	esac
	# Anything else: file names (traces, programs), from complete -o default.
}
complete -o default -F _gpuprof gpuprof
