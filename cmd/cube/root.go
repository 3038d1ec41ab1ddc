package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
)

// verbs are cube's own commands, one file each. Adding a verb is a file
// with a function like these (func(*env) *cobra.Command) and one line
// here; the daemon's commands are added after them (daemon.go), except
// where a verb already has the name (run, prog, stats).
var verbs = []func(*env) *cobra.Command{
	serveCmd,
	replCmd,
	progCmd,
	runCmd,
	statsCmd,
	importCmd,
	exportCmd,
	verifyCmd,
	demoCmd,
	stressCmd,
	versionCmd,
	keygenCmd,
	rekeyCmd,
}

// Command groups in "cube help".
const (
	groupVerbs = "verbs"
	// Daemon command groups are "daemon-" + server.Command.Group.
	groupDaemon = "daemon-"
)

// ownCtrlC marks (in Annotations) a command that decides itself what
// Ctrl-C does: the REPL. Every other command's context ends at Ctrl-C.
const ownCtrlC = "cube-own-ctrl-c"

// daemonCommand marks (in Annotations) a command that sends a daemon
// command (daemon.go).
const daemonCommand = "cube-daemon-command"

// completionTimeout bounds what completing a namespace name may wait for
// the daemon: a shell must never hang on Tab.
const completionTimeout = time.Second

// caseInsensitive is set once: "cube GET" is "cube get", as the daemon
// takes its commands in any case. cobra keeps this switch in a package
// variable; setting it once keeps concurrent runs (tests) race-free.
var caseInsensitive sync.Once

// newRoot builds the command tree for one run of cube on e.
//
// Conventions every verb follows, done by cobra and pflag rather than by
// hand: the global flags (-s, -n, -d, --json) are persistent, so they may
// come before or after the verb; a verb's flags may come anywhere among
// its arguments ("--" ends them); -h and --help print the verb's help and
// exit 0; a bad flag or argument count is a usage error (exit 2). Daemon
// commands are the exception for flags: their arguments go to the daemon
// as typed (a coordinate may be -5), so flags must come before the first.
func newRoot(e *env) *cobra.Command {
	caseInsensitive.Do(func() { cobra.EnableCaseInsensitive = true })
	root := &cobra.Command{
		Use:   "cube",
		Short: "cube's daemon, its client, the JavaScript REPL and tools",
		Long:  rootLong,
		Example: `  cube --data world.data                 # the REPL on ./world.data
  cube serve --data world.data &         # the daemon
  cube -n world import --latlng examples/cities/cities.csv.gz
  cube region world -10000 -10000 10000 10000 COUNT
  cube -n world run nearby 2.35,48.85,0.1`,
		Args:                       unknownVerb,
		SuggestionsMinimumDistance: 2,
		SilenceErrors:              true,
		SilenceUsage:               true,
		Annotations:                map[string]string{ownCtrlC: "the REPL"},
		RunE: func(cmd *cobra.Command, args []string) error {
			return (&replCommand{env: e}).Run(cmd.Context())
		},
	}
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		msg := err.Error()
		if strings.HasPrefix(msg, "unknown shorthand flag: '") && len(msg) > 25 && '0' <= msg[25] && msg[25] <= '9' {
			msg += ` (an argument that starts with "-" goes after "--")`
		}
		return &usageError{verbName(cmd) + msg}
	})
	pf := root.PersistentFlags()
	pf.StringVarP(&e.socket, "socket", "s", "", "the daemon's Unix socket (default $CUBE_SOCKET, else DIR/cube.sock if a daemon answers there)")
	pf.StringVarP(&e.namespace, "namespace", "n", "", "the namespace of prog, run, import, export, stats and the REPL (default $CUBE_NAMESPACE)")
	pf.StringVarP(&e.data, "data", "d", "", "the data directory DIR (default $CUBE_DATA, else ./cube.data)")
	pf.BoolVar(&e.json, "json", false, "print replies and reports as JSON")
	pf.StringVar(&e.keyFile, "key-file", "", keyFileUsage)
	root.RegisterFlagCompletionFunc("namespace", e.completeNamespace)
	root.RegisterFlagCompletionFunc("data", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveFilterDirs
	})

	root.AddGroup(&cobra.Group{ID: groupVerbs, Title: "Commands:"})
	for _, mk := range verbs {
		cmd := mk(e)
		cmd.GroupID = groupVerbs
		root.AddCommand(cmd)
	}
	root.SetHelpCommand(helpCmd(root))
	root.SetHelpCommandGroupID(groupVerbs)
	root.SetCompletionCommandGroupID(groupVerbs)
	addDaemonCommands(root, e)
	root.AddCommand(commandsTopic())
	conventions(root, e)
	return root
}

// conventions applies to every command under cmd what each would
// otherwise have to remember: Ctrl-C cancels its context (but for those
// marked ownCtrlC), and its argument check's errors are usage errors
// (exit 2), cobra's own checks (cobra.ExactArgs, ...) included.
func conventions(cmd *cobra.Command, e *env) {
	if run := cmd.RunE; run != nil && cmd.Annotations[ownCtrlC] == "" {
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			ctx, cancel := e.onCtrlC(cmd.Context())
			defer cancel()
			cmd.SetContext(ctx)
			return run(cmd, args)
		}
	}
	if cmd.Args != nil {
		cmd.Args = usageArgs(cmd.Args)
	}
	for _, c := range cmd.Commands() {
		conventions(c, e)
	}
}

// unknownVerb is the root's argument check: "cube" alone is the REPL, and
// any argument left is a verb that does not exist.
func unknownVerb(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q; run 'cube help'", args[0])
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += " (did you mean " + strings.Join(s, " or ") + "?)"
	}
	return &usageError{msg}
}

// usageArgs makes the errors of an argument check usage errors, which
// exit with 2 (cobra's own checks return plain errors).
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			if _, ok := err.(*usageError); ok {
				return err
			}
			return &usageError{verbName(cmd) + err.Error()}
		}
		return nil
	}
}

// verbName is "import: " for cube import, "" for cube itself: the
// prefix of an error message after "cube: ".
func verbName(cmd *cobra.Command) string {
	if !cmd.HasParent() {
		return ""
	}
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ") + ": "
}

// singleDashLong finds a long flag written with one dash (-data), which
// pflag would read as shorthands (-d ata): cube's flags took one dash
// before it moved to cobra. Daemon commands' arguments are not looked at
// past the command's name (they are the daemon's), nor anything after
// "--".
func singleDashLong(root *cobra.Command, args []string) error {
	cmd, _, err := root.Find(args)
	if err != nil {
		return nil
	}
	for _, a := range args {
		if a == "--" || (cmd.Annotations[daemonCommand] != "" && strings.EqualFold(a, cmd.Name())) {
			return nil
		}
		if len(a) < 3 || a[0] != '-' || a[1] == '-' {
			continue
		}
		name, _, _ := strings.Cut(a[1:], "=")
		if f := cmd.Flags().Lookup(name); f != nil {
			return usagef("%s is not a flag: long flags take two dashes, --%s", a, name)
		}
	}
	return nil
}

// noArgs is cobra.NoArgs with a message that says what was extra.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, not %q", cmd.Name(), args[0])
	}
	return nil
}

// argCount checks that a verb has between lo and hi arguments (hi < 0:
// no most), saying what they are (want: "NAME [ARG]").
func argCount(lo, hi int, want string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < lo || (hi >= 0 && len(args) > hi) {
			return usagef("%s needs %s, got %d argument(s)", cmd.Name(), want, len(args))
		}
		return nil
	}
}

// withNamespace checks first that the verb has a namespace (-n or
// $CUBE_NAMESPACE), then its arguments with check. When the namespace is
// missing and the first argument would be one ("cube run world nearby"),
// the error shows the command with -n.
func withNamespace(e *env, check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if _, err := e.ns(cmd.Name()); err != nil {
			if len(args) > 0 && check(cmd, args) != nil && check(cmd, args[1:]) == nil {
				return usagef("%s needs a namespace, given with -n NS: if %q is the namespace, cube %s -n %s %s", cmd.Name(), args[0], cmd.Name(), args[0], strings.Join(args[1:], " "))
			}
			return err
		}
		return check(cmd, args)
	}
}

// helpCmd is "cube help [command]": cobra's, but an unknown topic is a
// usage error rather than a message with exit 0.
func helpCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command (cube help commands: the daemon's)",
		Long:  "Help about any command: cube help VERB is cube VERB -h; cube help commands lists the daemon's commands.",
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			var names []string
			if len(args) == 0 {
				for _, c := range root.Commands() {
					if !c.Hidden && strings.HasPrefix(c.Name(), toComplete) {
						names = append(names, c.Name()+"\t"+c.Short)
					}
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := root.Find(args)
			if err != nil || (c == root && len(args) > 0) {
				return usagef("no help for %q: not a command (cube help lists them)", strings.Join(args, " "))
			}
			c.InitDefaultHelpFlag()
			return c.Help()
		},
	}
}

// completeNamespace completes -n with the names of the namespaces of
// the daemon the verb would talk to, or with nothing when none answers
// within completionTimeout.
func (e *env) completeNamespace(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	var names []string
	for _, n := range e.namespaceNames(ctx) {
		if strings.HasPrefix(n, toComplete) {
			names = append(names, n)
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}
