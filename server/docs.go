package server

import (
	"strings"
)

// An argument of a command as COMMAND DOCS describes it, so that redis-cli
// can show hints ("PUT ns c1..cd value" while typing) and client
// libraries can learn the commands. It is derived from the synopsis, so
// the table states each command's syntax once.
//
// Synopsis grammar: words separated by spaces; UPPER-CASE words are
// literal tokens, lower-case ones are values ("name..." repeats);
// "[...]" is optional; "a|b" (no spaces) picks one token; " | " (with
// spaces) separates alternatives made of several words.
type docArg struct {
	Name     string
	Type     string // string, integer, double, pure-token, oneof, block
	Token    string
	Optional bool
	Multiple bool
	Args     []docArg
}

// docArgs parses the synopsis after the command's name.
func docArgs(synopsis string) []docArg {
	_, rest, _ := strings.Cut(synopsis, " ")
	return parseSeq(rest)
}

// parseSeq parses a group's content: loose alternatives, or a sequence.
func parseSeq(s string) []docArg {
	if alts := splitTop(s, " | "); len(alts) > 1 {
		a := docArg{Name: "choice", Type: "oneof"}
		for _, alt := range alts {
			a.Args = append(a.Args, group(parseSeq(alt)))
		}
		return []docArg{a}
	}
	var out []docArg
	for _, w := range splitTop(s, " ") {
		if w == "" {
			continue
		}
		if strings.HasPrefix(w, "[") && strings.HasSuffix(w, "]") {
			a := group(parseSeq(w[1 : len(w)-1]))
			a.Optional = true
			out = append(out, a)
			continue
		}
		out = append(out, word(w))
	}
	return out
}

// group turns a sequence into one argument: itself if alone, a token with
// its value ("LIMIT n"), or a block.
func group(seq []docArg) docArg {
	switch {
	case len(seq) == 1:
		return seq[0]
	case len(seq) == 2 && seq[0].Type == "pure-token" && seq[1].Token == "":
		a := seq[1]
		a.Token = seq[0].Token
		if a.Type == "oneof" {
			a.Name = strings.ToLower(seq[0].Token)
		}
		return a
	}
	name := "block"
	if len(seq) > 0 && seq[0].Token != "" {
		name = strings.ToLower(seq[0].Token)
	}
	return docArg{Name: name, Type: "block", Args: seq}
}

func word(w string) docArg {
	if strings.Contains(w, "|") {
		a := docArg{Name: strings.ToLower(w), Type: "oneof"}
		for _, t := range strings.Split(w, "|") {
			a.Args = append(a.Args, word(t))
		}
		return a
	}
	if w == strings.ToUpper(w) && strings.ToLower(w) != w {
		return docArg{Name: strings.ToLower(w), Type: "pure-token", Token: w}
	}
	a := docArg{Name: w, Type: "string"}
	if strings.HasSuffix(w, "...") {
		a.Name, a.Multiple = strings.TrimSuffix(w, "..."), true
	}
	switch a.Name {
	case "n", "d", "ms", "mib", "bytes", "protover":
		a.Type = "integer"
	case "w":
		a.Type = "double"
	}
	return a
}

// splitTop splits s on sep outside brackets.
func splitTop(s, sep string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		default:
			if depth == 0 && strings.HasPrefix(s[i:], sep) {
				out = append(out, s[start:i])
				i += len(sep) - 1
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// writeDocArgs appends arguments in COMMAND DOCS's shape.
func writeDocArgs(cl *call, args []docArg) {
	w := cl.w
	w.Array(len(args))
	for _, a := range args {
		n := 2
		if a.Token != "" {
			n++
		}
		var flags []string
		if a.Optional {
			flags = append(flags, "optional")
		}
		if a.Multiple {
			flags = append(flags, "multiple")
		}
		if len(flags) > 0 {
			n++
		}
		if len(a.Args) > 0 {
			n++
		}
		w.Map(n)
		w.BulkString("name")
		w.BulkString(a.Name)
		w.BulkString("type")
		w.BulkString(a.Type)
		if a.Token != "" {
			w.BulkString("token")
			w.BulkString(a.Token)
		}
		if len(flags) > 0 {
			w.BulkString("flags")
			w.Set(len(flags))
			for _, f := range flags {
				w.Simple(f)
			}
		}
		if len(a.Args) > 0 {
			w.BulkString("arguments")
			writeDocArgs(cl, a.Args)
		}
	}
}

// COMMAND [COUNT | LIST | INFO name... | DOCS name...]
func cmdCommand(cl *call) error {
	sub := ""
	if len(cl.args) > 1 {
		sub = strings.ToUpper(string(cl.args[1]))
	}
	pick := func() []*Command {
		if len(cl.args) <= 2 {
			return cl.s.table
		}
		var out []*Command
		for _, n := range cl.args[2:] {
			if c := cl.s.lookup(n); c != nil {
				out = append(out, c)
			}
		}
		return out
	}
	switch sub {
	case "":
		writeCommandInfo(cl, cl.s.table)
	case "COUNT":
		cl.w.Int(int64(len(cl.s.table)))
	case "LIST":
		cl.w.Array(len(cl.s.table))
		for _, c := range cl.s.table {
			cl.w.BulkString(lowerName(c.Name))
		}
	case "INFO":
		writeCommandInfo(cl, pick())
	case "DOCS":
		cmds := pick()
		cl.w.Map(len(cmds))
		for _, c := range cmds {
			cl.w.BulkString(lowerName(c.Name))
			cl.w.Map(5)
			cl.w.BulkString("summary")
			cl.w.BulkString(c.Doc)
			cl.w.BulkString("since")
			cl.w.BulkString("1.0.0")
			cl.w.BulkString("group")
			cl.w.BulkString(c.Group)
			cl.w.BulkString("complexity")
			cl.w.BulkString("")
			cl.w.BulkString("arguments")
			writeDocArgs(cl, docArgs(c.Synopsis))
		}
	default:
		return usageErr("unknown COMMAND subcommand '%s'; usage: %s", clip(cl.args[1]), cl.cmd.Synopsis)
	}
	return nil
}

// writeCommandInfo writes COMMAND's per-command array as Redis 7 does:
// name, arity, flags, first/last key and step (0: namespaces are not
// keys), ACL categories, tips, key specs, subcommands.
func writeCommandInfo(cl *call, cmds []*Command) {
	w := cl.w
	w.Array(len(cmds))
	for _, c := range cmds {
		var flags []string
		if c.Flags&Write != 0 {
			flags = append(flags, "write")
		}
		if c.Flags&ReadOnly != 0 {
			flags = append(flags, "readonly")
		}
		if c.Flags&NoAuth != 0 {
			flags = append(flags, "no-auth")
		}
		if c.Flags&Admin != 0 {
			flags = append(flags, "admin")
		}
		if c.Flags&Fast != 0 {
			flags = append(flags, "fast")
		}
		w.Array(10)
		w.BulkString(lowerName(c.Name))
		w.Int(int64(c.Arity))
		w.Set(len(flags))
		for _, f := range flags {
			w.Simple(f)
		}
		w.Int(0)
		w.Int(0)
		w.Int(0)
		w.Set(1)
		w.Simple("@" + c.Group)
		w.Set(0)
		w.Array(0)
		w.Array(0)
	}
}
