package cube

import (
	"io"

	"github.com/cubelinux/cube/vm/jsproc"
)

// ServeJSWorker is the whole of a JavaScript worker process, the command
// Options.JSWorker names (cube's hidden verb "__js-worker" calls it): it
// runs the scripts its parent sends on stdin, answering on stdout, until
// stdin ends. It sets this process's memory limits and ignores the
// terminal's interrupts (they are meant for the parent); a script over
// its memory limit ends the process, which its parent reports as the
// run's failure.
func ServeJSWorker(stdin io.Reader, stdout io.Writer) error {
	return jsproc.Serve(stdin, stdout)
}
