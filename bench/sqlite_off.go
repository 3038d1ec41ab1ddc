//go:build nosqlite

package main

// Built with -tags nosqlite (CI's tiny run): SQLite is left out, and so is
// the minutes-long cold compile of modernc.org/sqlite on a fresh machine.
const haveSQLite = false

func newSQLite(string) store { return nil }
