package server

// The program commands wait for the root package's program registry
// (cube.DB.Prog, Run, Eval, Session). Until it lands they say so.

func errProgsUnavailable(cl *call) error {
	return &codeError{"NOTAVAIL", cl.cmd.Name + " is not available yet in this build: the program registry is not wired into the daemon"}
}

func cmdProg(cl *call) error   { return errProgsUnavailable(cl) }
func cmdProgs(cl *call) error  { return errProgsUnavailable(cl) }
func cmdUnprog(cl *call) error { return errProgsUnavailable(cl) }
func cmdRun(cl *call) error    { return errProgsUnavailable(cl) }
func cmdEval(cl *call) error   { return errProgsUnavailable(cl) }

func (s *Server) programStats(ns string) any { return nil }

func progErrorText(err error) (string, bool) { return "", false }
