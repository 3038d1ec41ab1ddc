package server

import "log/slog"

// fdReserve is the open files kept back from the connection budgets for
// the store (log segments, checkpoints, the compilation cache), the
// listeners and the metrics endpoint.
const fdReserve = 256

// fitFDs lowers the connection budgets to fit limit, the process's
// open-file limit (0: unknown). Without it a TCP flood could exhaust the file descriptors before
// reaching MaxClients, and then the Unix socket could accept nothing (and
// the store could open no file) although its own budget had room. The
// TCP budget gives way first; the Unix one keeps up to half the room.
func fitFDs(log *slog.Logger, limit, tcp, unix int) (int, int) {
	if limit <= 0 {
		return tcp, unix // unknown here
	}
	room := max(limit-fdReserve, 2)
	if tcp+unix <= room {
		return tcp, unix
	}
	nt, nu := tcp, unix
	if nu > room/2 {
		nu = max(room/2, 1)
	}
	nt = max(min(nt, room-nu), 1)
	log.Warn("connection budgets lowered to fit the open-file limit (raise it with ulimit -n)",
		"open_file_limit", limit, "max_clients", nt, "max_unix_clients", nu)
	return nt, nu
}
