package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cubelinux/cube/server"
)

// daemonGroups titles the daemon's command groups (server.Command.Group)
// in "cube help", in this order.
var daemonGroups = []struct{ id, title string }{
	{"namespace", "Daemon commands: namespaces"},
	{"value", "Daemon commands: values"},
	{"graph", "Daemon commands: the graph"},
	{"program", "Daemon commands: programs"},
	{"server", "Daemon commands: the daemon"},
}

// addDaemonCommands adds a command for each of the daemon's commands
// (server.Commands, the table that drives the daemon's dispatch and HELP)
// whose name no verb of root has: "cube put w 1 2 v" sends PUT w 1 2 v to
// the daemon and prints its reply. Their arguments are the daemon's, as
// typed: flags (-s, --json, ...) must come before the first one, so that
// a coordinate such as -5 stays an argument.
func addDaemonCommands(root *cobra.Command, e *env) {
	taken := map[string]bool{"help": true, "completion": true}
	for _, c := range root.Commands() {
		taken[c.Name()] = true
	}
	groups := map[string]bool{}
	for _, g := range daemonGroups {
		root.AddGroup(&cobra.Group{ID: groupDaemon + g.id, Title: g.title + ":"})
		groups[g.id] = true
	}
	for _, sc := range server.Commands() {
		name := strings.ToLower(sc.Name)
		if taken[name] {
			continue
		}
		group := groupDaemon + sc.Group
		if !groups[sc.Group] {
			group = groupDaemon + "server"
		}
		cmd := &cobra.Command{
			Use:   daemonUse(sc),
			Short: firstSentence(sc.Doc),
			Long: sc.Doc + "\n\n" +
				"A command of the daemon (" + sc.Name + ", in any case): its arguments are sent as\n" +
				"they are, to the daemon at -s SOCKET, else at DIR/cube.sock, else to the\n" +
				"store in DIR opened for this one command. cube's flags go before the first\n" +
				"argument; the namespace, where there is one, is the first argument (not -n).",
			GroupID:               group,
			Annotations:           map[string]string{daemonCommand: sc.Name},
			DisableFlagsInUseLine: true,
			RunE: func(cmd *cobra.Command, args []string) error {
				if f := cmd.Flag("namespace"); f != nil && f.Changed {
					return usagef("%s takes the namespace as its first argument, as the daemon does (cube %s), not -n", name, daemonUse(sc))
				}
				if cmd.ArgsLenAtDash() != 0 {
					// Without "--" in front, an argument that is one of
					// cube's flags was meant as one, not for the daemon.
					for _, a := range args {
						if a == "-h" || a == "--help" {
							return cmd.Help()
						}
						if f := cubeFlag(cmd, a); f != "" {
							return usagef("%s: %s is a flag of cube's, and flags go before the first argument of a daemon command (cube %s ... %s ...); to send it to the daemon as an argument, put -- before the arguments", name, a, f, name)
						}
					}
				}
				viaDaemon := e.viaDaemon()
				if err := (&verbCommand{e}).Run(cmd.Context(), append([]string{sc.Name}, args...)); err != nil {
					return err
				}
				if sc.Name == "SHUTDOWN" && viaDaemon {
					return e.awaitSocketGone(cmd.Context())
				}
				return nil
			},
		}
		cmd.Flags().SetInterspersed(false)
		if takesNamespace(sc) {
			cmd.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				if len(args) > 0 {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return e.completeNamespace(cmd, args, toComplete)
			}
		}
		root.AddCommand(cmd)
	}
}

// shutdownWait bounds how long cube shutdown waits for the daemon to
// finish: its drain, checkpoint and close.
const shutdownWait = 2 * time.Minute

// awaitSocketGone waits for the daemon's socket file to go, which the
// daemon removes only after its store is checkpointed and closed
// (server.Options.AfterDrain): when cube shutdown returns, the store is
// free for cube verify or another daemon.
func (e *env) awaitSocketGone(ctx context.Context) error {
	sock, _ := e.socketPath()
	ctx, cancel := context.WithTimeout(ctx, shutdownWait)
	defer cancel()
	for {
		if _, err := os.Stat(sock); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("shutdown: the daemon said OK, but its socket %s is still there after %s: it may still be draining", sock, shutdownWait)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// cubeFlag is the flag a (-s, --data=DIR, ...) names among cmd's flags,
// as "--data", or "" if it names none.
func cubeFlag(cmd *cobra.Command, a string) string {
	if len(a) < 2 || a[0] != '-' {
		return ""
	}
	var f *pflag.Flag
	if name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "="); strings.HasPrefix(a, "--") {
		f = cmd.Flags().Lookup(name)
	} else if len(a) == 2 || a[2] == '=' {
		f = cmd.Flags().ShorthandLookup(a[1:2])
	}
	if f == nil {
		return ""
	}
	return "--" + f.Name
}

// daemonUse is a command's synopsis with its name in lower case, the way
// cube's help shows it: "put ns c1..cd value".
func daemonUse(sc server.Command) string {
	return strings.ToLower(sc.Name) + sc.Synopsis[len(sc.Name):]
}

// takesNamespace reports whether the command's first argument is a
// namespace.
func takesNamespace(sc server.Command) bool {
	f := strings.Fields(sc.Synopsis)
	return len(f) > 1 && f[1] == "ns"
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// commandsTopic is "cube help commands": every command of the daemon
// with its synopsis, those a verb wraps (run, prog, stats) included.
func commandsTopic() *cobra.Command {
	var b strings.Builder
	b.WriteString("The daemon's commands, each also a command of cube (cube put w 1 2 v);\n" +
		"the names take any case. cube's flags go before the command's first argument.\n")
	for _, g := range daemonGroups {
		fmt.Fprintf(&b, "\n%s:\n", g.title)
		for _, sc := range server.Commands() {
			if sc.Group != g.id {
				continue
			}
			note := ""
			switch sc.Name {
			case "RUN", "PROG", "STATS":
				note = "   (cube " + strings.ToLower(sc.Name) + " is a verb around it: cube " + strings.ToLower(sc.Name) + " -h)"
			}
			fmt.Fprintf(&b, "  %s%s\n", daemonUse(sc), note)
		}
	}
	return &cobra.Command{
		Use:   "commands",
		Short: "The daemon's commands and their arguments",
		Long:  b.String(),
	}
}

// namespaceNames lists the namespaces of the daemon the verbs would talk
// to (-s, $CUBE_SOCKET, or DIR/cube.sock if a daemon answers there), or
// nothing if there is none or it does not answer before ctx ends. It
// does not open the store itself: that takes the store's lock and a
// recovery (1.5 s for an empty log on a busy machine), too much for a Tab.
func (e *env) namespaceNames(ctx context.Context) []string {
	if !e.viaDaemon() {
		return nil
	}
	got := make(chan []string, 1)
	// The goroutine may outlive the call (a daemon that accepts and does
	// not answer): the process ends soon after.
	go func() {
		sock, _ := e.socketPath()
		cl := newClient(sock)
		defer cl.Close()
		names, _ := cl.Do(ctx, "NS.LIST").StringSlice()
		got <- names
	}()
	select {
	case names := <-got:
		return names
	case <-ctx.Done():
		return nil
	}
}
