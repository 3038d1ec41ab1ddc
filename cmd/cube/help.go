package main

// rootLong is "cube help" before cobra's list of commands.
const rootLong = `cube is one binary: the daemon, a client for each of its commands, the
JavaScript REPL, and tools to load, dump, check and measure a store.

  cube                      the JavaScript REPL on the embedded store ($CUBE_DATA or ./cube.data)
  cube repl [-s SOCKET]     the REPL, embedded or on a daemon
  cube serve [flags]        run the daemon (cube serve -h)
  cube demo                 load the world's cities, query regions, walk roads, time it
  cube <daemon command>     any daemon command: put, get, del, region, link, walk, path,
                            ns.create, ns.list, ... (cube help commands lists them)
  cube prog -n NS NAME FILE register a program (.wasm or .js)
  cube run -n NS NAME [ARG] run it and print its output
  cube stats [-n NS]        statistics as a table
  cube import -n NS FILE    load CSV (c1,...,cd,value) or JSON lines ({"c":[...],"v":...})
  cube export -n NS         print every value as JSON lines
  cube verify DIR           open a data directory, check it, report what recovery found
  cube keygen FILE          make an encryption key file (for --key-file or $CUBE_KEY_FILE)
  cube rekey [flags]        move a stopped store to a new key, or to or from none (cube rekey -h)
  cube stress [flags]       load test the daemon (cube stress -h)
  cube completion bash      a completion script for bash (or zsh, fish, powershell)

Verbs talk to the daemon at -s SOCKET (or $CUBE_SOCKET). Without one they use
the daemon at DIR/cube.sock if it runs, else open DIR (--data) themselves.

The namespace: cube's verbs (prog, run, import, export, stats, the REPL) take
-n NS or $CUBE_NAMESPACE; daemon commands take it as their first argument, as
the daemon does (cube get NS 1 2).

Flags: the global flags below may come before or after the verb, and a verb's
flags anywhere among its arguments ("--" ends them); a daemon command's
arguments are the daemon's, so flags go before its first one. Long flags take
two dashes (--data, not -data). -h on any command prints its help.

An encrypted store needs its key: --key-file FILE (or $CUBE_KEY_FILE) on every
command that opens it, cube serve included (cube keygen makes one).

Exit status: 0 success, 1 command failed, 2 usage error.`
