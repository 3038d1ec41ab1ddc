package plugins

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/vm"
)

// Registration and versions: Prog stores a version, Unprog removes the
// program, and the in-memory mirror of a namespace's programs (nsReg.mu.progs)
// follows each committed change while nsReg.wmu is held. Prog compiles
// before it takes wmu, and the Progs waiting for it commit together.

// ProgOptions configure one program. They are part of its version:
// registering the same code with other options is a new version.
type ProgOptions struct {
	// ReadOnly programs run on a snapshot, concurrently with each other
	// and with writers; a write fails the run with vm.ErrReadOnly.
	ReadOnly bool
	// Limits bound each run; zero fields take the registry's defaults
	// (Options.Limits), then vm's. Limits.ReadOnly is the same as
	// ReadOnly.
	Limits vm.Limits
}

// ProgramInfo describes a registered program.
type ProgramInfo struct {
	Namespace  string
	Name       string
	Kind       vm.Kind
	Version    string // hex SHA-256 of kind, options and code
	ReadOnly   bool
	Limits     vm.Limits // as registered; zero fields mean the defaults
	CodeSize   int
	Registered time.Time
	Telemetry  Telemetry
}

// Prog validates and compiles code, then stores it as program name of
// namespace ns, replacing any earlier version in the same write. It
// returns the program's description, whose Version is the content hash.
//
// Registering the code, kind and options of the current version again
// changes nothing and writes nothing. The registration is durable when Prog
// returns, as the engine's sync mode promises for any write.
//
// # Errors
//
// ErrBadName, ErrBadKind, ErrEmptyCode; a *vm.Error of KindBadModule or
// KindABIVersion (syntax error, refused import, no run export) or of
// KindTimeout (a start function that never returns); engine.ErrNoNamespace.
func (r *Registry) Prog(ctx context.Context, ns, name string, kind vm.Kind, code []byte, o ProgOptions) (ProgramInfo, error) {
	if err := checkName(name); err != nil {
		return ProgramInfo{}, err
	}
	sb, err := r.sandbox(kind)
	if err != nil {
		return ProgramInfo{}, err
	}
	if len(code) == 0 {
		return ProgramInfo{}, ErrEmptyCode
	}
	lim := o.Limits
	// code is the caller's: seal copies it into the stored record, which
	// rec.code then points into.
	rec := &record{registered: r.o.Clock(), kind: kind, readOnly: o.ReadOnly || lim.ReadOnly, code: code}
	lim.ReadOnly = false
	rec.limits = lim
	stored, err := rec.seal()
	if err != nil {
		return ProgramInfo{}, err
	}
	g, err := r.reg(ctx, ns)
	if err != nil {
		return ProgramInfo{}, err
	}
	if cur := g.get(name); cur != nil && cur.rec.version == rec.version {
		return r.info(ns, cur), nil
	}
	// The compile holds no lock, so the PROGs of a namespace compile in
	// parallel; their writes are then committed in batches (commitProgs).
	p, err := sb.Compile(ctx, rec.code, r.limits(rec))
	if err != nil {
		return ProgramInfo{}, err
	}
	q := &progReq{name: name, rec: rec, stored: stored, p: p}
	g.pmu.Lock()
	g.pending = append(g.pending, q)
	g.pmu.Unlock()
	g.wmu.Lock()
	defer g.wmu.Unlock()
	if !q.done {
		r.commitProgs(ctx, ns, g)
	}
	return q.info, q.err
}

// progReq is one Prog waiting for its namespace's next registry commit.
type progReq struct {
	name   string
	rec    *record
	stored []byte
	p      vm.Program
	// Set under wmu by the commit that took the request.
	done bool
	info ProgramInfo
	err  error
}

// commitProgs commits every pending Prog of g, in the order they queued,
// as one engine transaction: one log sync for all of them (a group
// commit), where one Prog per sync, under wmu, made the registrations of
// a namespace one sync each, one after the other. wmu held, as for any
// registry writer, so the mirror still follows each committed change in
// commit order. If the batch fails as a whole, each is tried alone, so
// that one request's failure is its own.
func (r *Registry) commitProgs(ctx context.Context, ns string, g *nsReg) {
	g.pmu.Lock()
	batch := g.pending
	g.pending = nil
	g.pmu.Unlock()
	// A version already current (the mirror, or earlier in the batch)
	// writes nothing.
	var todo []*progReq
	latest := map[string][32]byte{}
	for _, q := range batch {
		v, ok := latest[q.name]
		if !ok {
			if cur := g.get(q.name); cur != nil {
				v, ok = cur.rec.version, true
			}
		}
		if ok && v == q.rec.version {
			continue
		}
		latest[q.name] = q.rec.version
		todo = append(todo, q)
	}
	if len(todo) > 1 {
		// Others wait on this commit: the caller's cancellation is not
		// theirs.
		err := g.ns.Update(context.WithoutCancel(ctx), func(tx *engine.Tx) error {
			for _, q := range todo {
				if err := tx.SetMeta(progPrefix+q.name, q.stored); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			for _, q := range todo {
				r.install(ns, g, q)
			}
		} else {
			todo = nil // each alone, below
		}
	}
	for _, q := range batch {
		if q.done {
			continue
		}
		if cur := g.get(q.name); cur != nil && cur.rec.version == q.rec.version {
			_ = q.p.Close(ctx)
			q.info, q.done = r.info(ns, cur), true
			continue
		}
		err := g.ns.Update(context.WithoutCancel(ctx), func(tx *engine.Tx) error { return tx.SetMeta(progPrefix+q.name, q.stored) })
		if err != nil {
			_ = q.p.Close(ctx)
			q.err, q.done = err, true
			continue
		}
		r.install(ns, g, q)
	}
}

// install makes q's committed version the current one in the mirror.
// wmu held.
func (r *Registry) install(ns string, g *nsReg, q *progReq) {
	e := &entry{name: q.name, rec: q.rec}
	e.cache.prog = &compiled{p: q.p}
	g.mu.Lock()
	old := g.mu.progs[q.name]
	if old != nil {
		e.tel = old.tel
	} else {
		e.tel = newTelemetry()
	}
	g.mu.progs[q.name] = e
	g.mu.Unlock()
	if old != nil {
		old.retire()
	}
	q.info, q.done = r.info(ns, e), true
}

// Unprog removes program name from namespace ns, with its telemetry. Runs
// in progress finish with the version they started with. It is durable
// when it returns, like any write.
func (r *Registry) Unprog(ctx context.Context, ns, name string) error {
	g, err := r.reg(ctx, ns)
	if err != nil {
		return err
	}
	g.wmu.Lock()
	defer g.wmu.Unlock()
	err = g.ns.Update(ctx, func(tx *engine.Tx) error {
		ok, err := tx.DeleteMeta(progPrefix + name)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: %q in namespace %q", ErrNoProgram, name, ns)
		}
		_, err = tx.DeleteMeta(statPrefix + name)
		return err
	})
	if err != nil {
		return err
	}
	g.mu.Lock()
	old := g.mu.progs[name]
	delete(g.mu.progs, name)
	g.mu.Unlock()
	if old != nil {
		old.retire()
	}
	return nil
}

// ProgInfo describes program name of namespace ns, telemetry included.
func (r *Registry) ProgInfo(ns, name string) (ProgramInfo, error) {
	g, err := r.reg(context.Background(), ns)
	if err != nil {
		return ProgramInfo{}, err
	}
	e, err := r.find(context.Background(), g, name)
	if err != nil {
		return ProgramInfo{}, err
	}
	if e == nil {
		return ProgramInfo{}, fmt.Errorf("%w: %q in namespace %q", ErrNoProgram, name, ns)
	}
	return r.info(ns, e), nil
}

// find returns program name from the mirror, or, if the mirror has
// none, from the namespace's metadata, which a write this registry did
// not make may have changed: a follower's store applies the programs
// its cluster's leader registered (cube serve --cluster), and the mirror
// was loaded on first use, perhaps before. nil if there is none.
func (r *Registry) find(ctx context.Context, g *nsReg, name string) (*entry, error) {
	if e := g.get(name); e != nil {
		return e, nil
	}
	if err := r.refresh(ctx, g, name); err != nil {
		return nil, err
	}
	return g.get(name), nil
}

// Progs describes every program of namespace ns, sorted by name.
func (r *Registry) Progs(ns string) ([]ProgramInfo, error) {
	g, err := r.reg(context.Background(), ns)
	if err != nil {
		return nil, err
	}
	if err := r.resync(context.Background(), g); err != nil {
		return nil, err
	}
	g.mu.RLock()
	out := make([]ProgramInfo, 0, len(g.mu.progs))
	for _, e := range g.mu.progs {
		out = append(out, r.info(ns, e))
	}
	g.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// All describes every program of every namespace, sorted by namespace and
// name.
func (r *Registry) All() []ProgramInfo {
	var out []ProgramInfo
	for _, ni := range r.eng.Namespaces() {
		ps, err := r.Progs(ni.Name)
		if err != nil {
			continue // dropped meanwhile
		}
		out = append(out, ps...)
	}
	return out
}

func (r *Registry) info(ns string, e *entry) ProgramInfo {
	return ProgramInfo{
		Namespace:  ns,
		Name:       e.name,
		Kind:       e.rec.kind,
		Version:    e.rec.versionString(),
		ReadOnly:   e.rec.readOnly,
		Limits:     e.rec.limits,
		CodeSize:   len(e.rec.code),
		Registered: e.rec.registered,
		Telemetry:  e.tel.snapshot(),
	}
}

// resync rereads the programs that the mirror and the namespace's
// metadata disagree on, by name (see find).
func (r *Registry) resync(ctx context.Context, g *nsReg) error {
	var stored []string
	if err := g.ns.View(ctx, func(tx *engine.Tx) error {
		for _, key := range tx.MetaKeys(progPrefix) {
			stored = append(stored, key[len(progPrefix):])
		}
		return nil
	}); err != nil {
		return err
	}
	g.mu.RLock()
	var differ []string
	for _, name := range stored {
		if g.mu.progs[name] == nil {
			differ = append(differ, name)
		}
	}
	for name := range g.mu.progs {
		if !slices.Contains(stored, name) {
			differ = append(differ, name)
		}
	}
	g.mu.RUnlock()
	for _, name := range differ {
		if err := r.refresh(ctx, g, name); err != nil {
			return err
		}
	}
	return nil
}

// refresh rereads program name from the namespace's metadata into the
// in-memory mirror.
func (r *Registry) refresh(ctx context.Context, g *nsReg, name string) error {
	g.wmu.Lock()
	defer g.wmu.Unlock()
	var rec *record
	err := g.ns.View(ctx, func(tx *engine.Tx) error {
		b, ok := tx.Meta(progPrefix + name)
		if !ok {
			return nil
		}
		var err error
		rec, err = decodeRecord(b)
		return err
	})
	if err != nil {
		return err
	}
	g.mu.Lock()
	old := g.mu.progs[name]
	if rec == nil {
		delete(g.mu.progs, name)
	} else {
		e := &entry{name: name, rec: rec, tel: newTelemetry()}
		if old != nil {
			e.tel = old.tel
		}
		g.mu.progs[name] = e
	}
	g.mu.Unlock()
	if old != nil {
		old.retire()
	}
	return nil
}
