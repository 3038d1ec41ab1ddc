package server

import (
	"context"
	"errors"
)

// Cluster is what the daemon asks of cluster mode (package
// server/cluster, on Raft, implements it). With Options.Cluster set,
// every write command first asks WriteCheck, and the CLUSTER.*
// commands reach it.
type Cluster interface {
	// WriteCheck returns nil when this node takes writes (it is the
	// leader), else the error to reply: a redirect to the leader (see
	// Redirect) or why there is none to send the client to.
	WriteCheck() error
	// Info describes the node and the cluster as "key:value" lines in
	// the order they should be shown.
	Info() [][2]string
	// Join adds the node id, reached for Raft at raftAddr and by
	// clients at respAddr, as a voter. Leave removes a node.
	Join(ctx context.Context, id, raftAddr, respAddr string) error
	Leave(ctx context.Context, id string) error
}

// Reply is an error that is its own reply: its text goes to the client
// as it is, code first (MOVED, TRYAGAIN, CLUSTERDOWN), so that a client
// that knows the code can act on it.
type Reply interface {
	error
	Reply() string
}

// replyText is the reply of err if it is, or wraps, a Reply.
func replyText(err error) (string, bool) {
	var r Reply
	if errors.As(err, &r) {
		return r.Reply(), true
	}
	return "", false
}

// clusterCheck refuses a write on a node that does not take them.
// CHECKPOINT is a write of this node's own files, not of the data.
func (c *conn) clusterCheck(cmd *Command) error {
	cl := c.s.o.Cluster
	if cl == nil || cmd.Flags&Write == 0 || cmd.Flags&Admin != 0 {
		return nil
	}
	return cl.WriteCheck()
}

// CLUSTER.INFO
func cmdClusterInfo(cl *call) error {
	cc := cl.s.o.Cluster
	if cc == nil {
		return usageErr("this daemon is not in cluster mode (cube serve --cluster)")
	}
	var b []byte
	for _, kv := range cc.Info() {
		b = append(b, kv[0]...)
		b = append(b, ':')
		b = append(b, kv[1]...)
		b = append(b, "\r\n"...)
	}
	cl.w.Bulk(b)
	return nil
}

// CLUSTER.JOIN id raft-addr resp-addr
func cmdClusterJoin(cl *call) error {
	cc := cl.s.o.Cluster
	if cc == nil {
		return usageErr("this daemon is not in cluster mode (cube serve --cluster)")
	}
	if err := cc.WriteCheck(); err != nil {
		return err
	}
	if err := cc.Join(cl.ctx, string(cl.args[1]), string(cl.args[2]), string(cl.args[3])); err != nil {
		return err
	}
	cl.w.OK()
	return nil
}

// CLUSTER.LEAVE id
func cmdClusterLeave(cl *call) error {
	cc := cl.s.o.Cluster
	if cc == nil {
		return usageErr("this daemon is not in cluster mode (cube serve --cluster)")
	}
	if err := cc.WriteCheck(); err != nil {
		return err
	}
	if err := cc.Leave(cl.ctx, string(cl.args[1])); err != nil {
		return err
	}
	cl.w.OK()
	return nil
}
