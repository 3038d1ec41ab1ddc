//go:build unix

package cluster_test

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// A netLab is a private network for a cluster's nodes: each node runs in
// a network namespace of its own, with one interface on a bridge that
// joins them all (in a hub namespace of the lab's, so the machine's own
// network is left alone). Cutting the network drops packets for real, as
// a broken switch would: nothing answers, open connections hang until
// they time out, and new ones time out too, or fail with "no route to
// host" once the neighbour (ARP) entry has expired, since the ARP
// requests go unanswered as well.
//
// A cut is made with policy routing rules, which is iproute2 and the
// kernel alone (no iptables or nftables): node a gets "from b's address,
// arriving on eth0: blackhole" and b the same for a. The rule must come
// before the rule that delivers to local addresses, normally at
// priority 0, so the lab moves that one down to 100 in every node.
//
// Clients (the tests) stay outside the lab and reach every node through
// its Unix socket (dial): a partition splits the nodes from each other,
// never a client from a node, so a client can go on talking to a leader
// cut off from the rest, as a client on the wrong side of a real
// partition would.
type netLab struct {
	t      testing.TB
	hub    string   // the bridge's namespace
	spaces []string // node i's namespace
	subnet string   // "10.77.S." : node i is subnet+(i+1)
	mu     sync.Mutex
	cut    map[[2]int]bool // node a drops packets from node b
}

var labs atomic.Int32

// labName matches the namespaces a lab makes: "cube" PID "-" N.
var labName = regexp.MustCompile(`^cube([0-9]+)-[0-9]+`)

// newNetLab makes a lab for size nodes, or skips the test where the
// machine does not allow network namespaces (not root, or a kernel or
// container without them). CI installs iproute2 (.ci/install.d/netns.sh):
// there its absence fails the test.
func newNetLab(t testing.TB, size int) *netLab {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skipf("network namespaces are Linux's; this is %s", runtime.GOOS)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("ip is not installed (see .ci/install.d/netns.sh)")
		}
		t.Skip("ip is not installed: apt-get install iproute2")
	}
	if os.Geteuid() != 0 {
		t.Skipf("network namespaces need root (CAP_SYS_ADMIN and CAP_NET_ADMIN); this test runs as uid %d", os.Geteuid())
	}
	sweepLabs()
	seq := labs.Add(1)
	prefix := fmt.Sprintf("cube%d-%d", os.Getpid(), seq)
	l := &netLab{t: t, hub: prefix + "h", subnet: fmt.Sprintf("10.77.%d.", seq%250), cut: map[[2]int]bool{}}
	// The namespaces go when the test ends, after the nodes in them
	// (whose cleanups, registered later, run first).
	t.Cleanup(func() {
		for _, ns := range append(l.spaces, l.hub) {
			exec.Command("ip", "netns", "del", ns).Run()
		}
	})
	setup := func(args ...string) {
		t.Helper()
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err == nil {
			return
		}
		msg := strings.TrimSpace(string(out))
		for _, s := range []string{"Operation not permitted", "Permission denied", "not supported", "Unknown device type", "Read-only file system"} {
			if strings.Contains(msg, s) {
				t.Skipf("this machine does not allow the network namespaces the test needs: ip %s: %s", strings.Join(args, " "), msg)
			}
		}
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, msg)
	}
	setup("netns", "add", l.hub)
	setup("-n", l.hub, "link", "add", "br0", "type", "bridge")
	setup("-n", l.hub, "link", "set", "br0", "up")
	for i := range size {
		ns := fmt.Sprintf("%s%d", prefix, i+1)
		l.spaces = append(l.spaces, ns)
		port := fmt.Sprintf("p%d", i+1)
		setup("netns", "add", ns)
		setup("-n", l.hub, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns)
		setup("-n", l.hub, "link", "set", port, "master", "br0", "up")
		setup("-n", ns, "link", "set", "lo", "up")
		setup("-n", ns, "addr", "add", l.ip(i)+"/24", "dev", "eth0")
		setup("-n", ns, "link", "set", "eth0", "up")
		setup("-n", ns, "rule", "add", "pref", "100", "lookup", "local")
		setup("-n", ns, "rule", "del", "pref", "0")
	}
	return l
}

// sweepLabs deletes the namespaces of labs whose test process is gone
// (one killed by go test's timeout cannot clean up).
func sweepLabs() {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		m := labName.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		if pid == os.Getpid() || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		exec.Command("ip", "netns", "del", name).Run()
	}
}

// ip is node i's address.
func (l *netLab) ip(i int) string { return l.subnet + strconv.Itoa(i+1) }

// partition splits the nodes into groups, by index: no packet passes
// between two nodes of different groups, in either direction. Nodes in
// no group keep every link they had.
func (l *netLab) partition(groups ...[]int) {
	l.t.Helper()
	for gi, g := range groups {
		for _, h := range groups[gi+1:] {
			for _, a := range g {
				for _, b := range h {
					l.drop(a, b, true)
					l.drop(b, a, true)
				}
			}
		}
	}
}

// heal undoes every partition.
func (l *netLab) heal() {
	l.t.Helper()
	l.mu.Lock()
	var cut [][2]int
	for k := range l.cut {
		cut = append(cut, k)
	}
	l.mu.Unlock()
	for _, k := range cut {
		l.drop(k[0], k[1], false)
	}
}

// drop makes node a drop (or stop dropping) what it receives from b.
func (l *netLab) drop(a, b int, on bool) {
	l.t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	k := [2]int{a, b}
	if l.cut[k] == on {
		return
	}
	op := "del"
	if on {
		op = "add"
	}
	args := []string{"-n", l.spaces[a], "rule", op, "pref", strconv.Itoa(10 + b), "from", l.ip(b), "iif", "eth0", "blackhole"}
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		l.t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	l.cut[k] = on
}
