//go:build !nosqlite

package main

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"

	_ "modernc.org/sqlite" // the pure-Go SQLite, R*Tree included
)

// haveSQLite: this build measures SQLite (the nosqlite tag leaves it out,
// and with it the long compile of a pure-Go SQLite, as CI's tiny run does).
const haveSQLite = true

func newSQLite(dir string) store { return &sqliteStore{dir: dir} }

// sqliteStore is SQLite (modernc.org/sqlite, pure Go) with the values in
// a rowid table and the points in an integer R*Tree (rtree_i32) whose
// boxes are the points themselves; boxes, radii and point gets ask the
// R*Tree.
type sqliteStore struct {
	dir                 string
	db                  *sql.DB
	boxQ, withinQ, getQ *sql.Stmt
}

func (s *sqliteStore) name() string { return "SQLite R*Tree" }

func (s *sqliteStore) load(ctx context.Context, d *dataset) (err error) {
	s.db, err = sql.Open("sqlite", "file:"+filepath.Join(s.dir, "pts.db")+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"+
		// A page cache that holds the whole database (the default is 2 MB),
		// as the other stores hold theirs in memory.
		"&_pragma=cache_size(-1048576)&_pragma=mmap_size(2147483648)")
	if err != nil {
		return err
	}
	// One connection: database/sql would otherwise open more, each with
	// its own page cache.
	s.db.SetMaxOpenConns(1)
	for _, q := range []string{
		`CREATE TABLE pts (id INTEGER PRIMARY KEY, v BLOB NOT NULL)`,
		`CREATE VIRTUAL TABLE idx USING rtree_i32(id, x0, x1, y0, y1, z0, z1)`,
	} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	const batch = 100000
	for i := 0; i < len(d.pts); i += batch {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		pv, err := tx.PrepareContext(ctx, `INSERT INTO pts (id, v) VALUES (?, ?)`)
		if err != nil {
			return err
		}
		pi, err := tx.PrepareContext(ctx, `INSERT INTO idx VALUES (?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		for j := i; j < min(i+batch, len(d.pts)); j++ {
			p := d.pts[j]
			if _, err := pv.ExecContext(ctx, j, value(p)); err != nil {
				return err
			}
			if _, err := pi.ExecContext(ctx, j, p[0], p[0], p[1], p[1], p[2], p[2]); err != nil {
				return err
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	// At rest: the WAL checkpointed into the database file.
	if _, err := s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return err
	}
	const sel = `SELECT idx.x0, idx.y0, idx.z0, pts.v FROM idx JOIN pts ON pts.id = idx.id WHERE idx.x0 <= ? AND idx.x1 >= ? AND idx.y0 <= ? AND idx.y1 >= ? AND idx.z0 <= ? AND idx.z1 >= ?`
	if s.boxQ, err = s.db.PrepareContext(ctx, sel); err != nil {
		return err
	}
	if s.withinQ, err = s.db.PrepareContext(ctx, sel+` AND (idx.x0-?)*(idx.x0-?) + (idx.y0-?)*(idx.y0-?) + (idx.z0-?)*(idx.z0-?) <= ?`); err != nil {
		return err
	}
	s.getQ, err = s.db.PrepareContext(ctx, sel)
	return err
}

func (s *sqliteStore) close() error {
	if s.db == nil {
		return nil
	}
	return s.db.Close()
}

func (s *sqliteStore) rows(rows *sql.Rows, err error, a *answer) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	var p point
	var v []byte
	for rows.Next() {
		if err := rows.Scan(&p[0], &p[1], &p[2], &v); err != nil {
			return err
		}
		a.add(p, v)
	}
	return rows.Err()
}

func (s *sqliteStore) box(ctx context.Context, lo, hi point, a *answer) error {
	rows, err := s.boxQ.QueryContext(ctx, hi[0], lo[0], hi[1], lo[1], hi[2], lo[2])
	return s.rows(rows, err, a)
}

func (s *sqliteStore) within(ctx context.Context, c point, r float64, a *answer) error {
	lo, hi := around(c, r)
	r2 := int64(math.Floor(r * r))
	rows, err := s.withinQ.QueryContext(ctx, hi[0], lo[0], hi[1], lo[1], hi[2], lo[2], c[0], c[0], c[1], c[1], c[2], c[2], r2)
	return s.rows(rows, err, a)
}

func (s *sqliteStore) get(ctx context.Context, p point, a *answer) error {
	rows, err := s.getQ.QueryContext(ctx, p[0], p[0], p[1], p[1], p[2], p[2])
	n := a.n
	if err := s.rows(rows, err, a); err != nil {
		return err
	}
	if a.n != n+1 {
		return fmt.Errorf("sqlite: %v: %d rows", p, a.n-n)
	}
	return nil
}
