# bash completion for tiledispatch (installed as
# share/bash-completion/completions/tiledispatch).
_tiledispatch()
{
    local cur prev words cword
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    local commands="dispatch explain emit kernel tensor-maps rules validate predicates impls help"
    local options="--rules --plugin --arch --lang --format --json --no-default-rules --together -o --help --version"
    case $prev in
        --rules|-o)
            COMPREPLY=($(compgen -f -- "$cur"))
            return ;;
        --plugin)
            COMPREPLY=($(compgen -f -X '!*.so' -- "$cur") $(compgen -d -- "$cur"))
            return ;;
        --lang)
            COMPREPLY=($(compgen -W "cuda tirx" -- "$cur"))
            return ;;
        --format)
            local fmts="text tvm json" j
            for ((j = 1; j < COMP_CWORD; j++)); do
                [[ ${COMP_WORDS[j]} == tensor-maps ]] && fmts="c json"
            done
            COMPREPLY=($(compgen -W "$fmts" -- "$cur"))
            return ;;
        --arch)
            COMPREPLY=($(compgen -W "sm_80 sm_86 sm_89 sm_90 sm_90a sm_100 sm_100a" -- "$cur"))
            return ;;
    esac
    # The command: the first word that is not an option or an option's value.
    local i cmd=
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            --rules|--plugin|--arch|--lang|--format|-o) ((i++)) ;;
            -*) ;;
            *) cmd=${COMP_WORDS[i]}; break ;;
        esac
    done
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$options" -- "$cur"))
    elif [[ -z $cmd ]]; then
        COMPREPLY=($(compgen -W "$commands" -- "$cur"))
    elif [[ $cmd == help ]]; then
        COMPREPLY=($(compgen -W "$commands" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -X '!*.y*ml' -- "$cur") $(compgen -d -- "$cur"))
    fi
}
complete -F _tiledispatch tiledispatch
