package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cubelinux/cube"
)

// keyFileEnv names the key file when --key-file does not.
const keyFileEnv = "CUBE_KEY_FILE"

// keyFileUsage is the --key-file flag's help.
const keyFileUsage = "the store's encryption key file, made by 'cube keygen' (default $" + keyFileEnv + "; without either the store is plain)"

// keygenCmd is "cube keygen FILE".
func keygenCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "keygen FILE",
		Short: "Make a new encryption key file, for --key-file",
		Long: `Writes a new random 256-bit key to FILE as 64 hex digits, mode 0600, synced
to disk. It never replaces an existing file. Give the file to every command
that opens the store with --key-file FILE (or $CUBE_KEY_FILE=FILE): a store
made with a key is encrypted at rest (its log and checkpoints, AES-256-GCM),
and cannot be read without it. Keep a copy of the key file apart from the
store; whoever has both can read the data. An existing store moves to a key
with cube rekey.`,
		Example: `  cube keygen store.key
  cube serve --data world.data --key-file store.key
  CUBE_KEY_FILE=store.key cube --data world.data -n world export > world.jsonl`,
		Args: argCount(1, 1, "one FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			if err := cube.WriteKeyFile(path); err != nil {
				return unprefixed(err)
			}
			fmt.Fprintf(e.stdout, "wrote a new key to %s (mode 0600); keep a copy apart from the store: without it an encrypted store cannot be read\n", path)
			return nil
		},
	}
}

// rekeyCommand is "cube rekey".
type rekeyCommand struct {
	*env
	fromPlain, toPlain bool
	newKeyFile         string
}

func rekeyCmd(e *env) *cobra.Command {
	c := &rekeyCommand{env: e}
	cmd := &cobra.Command{
		Use:   "rekey [--key-file OLD | --from-plain] (--new-key-file NEW | --to-plain)",
		Short: "Move a stopped store to a new encryption key, or to or from none",
		Long: `Moves the store in the data directory (--data, $CUBE_DATA or ./cube.data) from
its key (--key-file OLD or $CUBE_KEY_FILE; --from-plain for a plain store) to
the key in NEW (--new-key-file; --to-plain decrypts it). The store's whole
state is written under the new key beside the old files, made durable, and
committed by one rename; only then are the old checkpoints and log removed.
If it is cut short (a crash, a full disk), the store opens under exactly one
of the two keys, and running the same rekey again finishes it.

The store must be stopped: a daemon serving it holds its lock, so shut it
down first (cube --data DIR shutdown, or cube -s SOCKET shutdown). Encrypting also removes the store's
WASM compilation cache (compiled code in clear); an encrypted store compiles
its programs in memory. The old files are unlinked, not overwritten: the
disk may still hold their blocks.`,
		Example: `  cube keygen new.key
  cube rekey --data world.data --from-plain --new-key-file new.key
  cube rekey --data world.data --key-file old.key --new-key-file new.key
  cube rekey --data world.data --key-file new.key --to-plain`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.Run(cmd.Context(), cmd.Flags().Changed("key-file"))
		},
	}
	f := cmd.Flags()
	f.BoolVar(&c.fromPlain, "from-plain", false, "the store is plain now (no --key-file; $CUBE_KEY_FILE is ignored)")
	f.StringVar(&c.newKeyFile, "new-key-file", "", "the key file the store moves to (make one with 'cube keygen NEW')")
	f.BoolVar(&c.toPlain, "to-plain", false, "decrypt the store: it moves to no key")
	return cmd
}

// Run rekeys the data directory. keyFlag says whether --key-file was
// given on the command line (which --from-plain contradicts; the
// environment's key file it overrides).
func (c *rekeyCommand) Run(ctx context.Context, keyFlag bool) error {
	if c.fromPlain && keyFlag {
		return usagef("rekey: --from-plain and --key-file contradict each other: the store has a key (--key-file OLD) or none (--from-plain)")
	}
	if c.toPlain == (c.newKeyFile != "") {
		return usagef("rekey needs the key to move to: --new-key-file NEW (make one with 'cube keygen NEW'), or --to-plain to decrypt")
	}
	var oldKey []byte
	if !c.fromPlain {
		key, err := c.storeKey()
		if err != nil {
			return err
		}
		if key == nil {
			return usagef("rekey needs the store's current key: --key-file OLD (or $%s), or --from-plain for a plain store", keyFileEnv)
		}
		oldKey = key
		defer clear(key)
	}
	var newKey []byte
	if !c.toPlain {
		key, err := cube.ReadKeyFile(c.newKeyFile)
		if err != nil {
			return fmt.Errorf("rekey: the new key: %w", unprefixed(err))
		}
		newKey = key
		defer clear(key)
	}
	dir := c.dataDir()
	start := time.Now()
	rep, err := cube.Rekey(ctx, dir, oldKey, newKey, cube.RekeyOptions{})
	took := time.Since(start)
	switch {
	case errors.Is(err, cube.ErrNoStore):
		return noStoreError(dir, "--data or $CUBE_DATA")
	case errors.Is(err, cube.ErrLocked):
		return fmt.Errorf("rekey: %s is in use (a daemon serves it, or another cube has it open): rekey moves a stopped store only; stop the daemon first with 'cube --data %s shutdown' (or 'cube -s SOCKET shutdown'), then run the rekey again", dir, dir)
	case err != nil:
		return fmt.Errorf("rekey: %w", c.keyError(err, oldKey != nil))
	}
	if c.json {
		return json.NewEncoder(c.stdout).Encode(struct {
			cube.RekeyReport
			Dir        string  `json:"dir"`
			DurationMS float64 `json:"duration_ms"`
		}{rep, dir, float64(took) / float64(time.Millisecond)})
	}
	to := "plain"
	if rep.Encrypted {
		to = "encrypted under the key in " + c.newKeyFile
	}
	if rep.Already {
		fmt.Fprintf(c.stdout, "%s is already %s: nothing to do\n", dir, to)
		return nil
	}
	fmt.Fprintf(c.stdout, "%s is now %s: %d namespace(s), %d records, %s rewritten in %s; the old key no longer opens it\n",
		dir, to, rep.Namespaces, rep.Records, sizeText(rep.Bytes), took.Round(time.Millisecond))
	if rep.CacheRemoved {
		fmt.Fprintf(c.stdout, "removed %s/cache/wasm (compiled programs in clear); an encrypted store compiles them in memory\n", dir)
	}
	return nil
}

// keyPath is the key file named by --key-file, else $CUBE_KEY_FILE, and
// which of the two named it; "" without either (a plain store).
func (e *env) keyPath() (path, from string) {
	if e.keyFile != "" {
		return e.keyFile, "--key-file"
	}
	if p := e.getenv(keyFileEnv); p != "" {
		return p, "$" + keyFileEnv
	}
	return "", ""
}

// storeKey reads the store's key from the file keyPath names: nil
// without one.
func (e *env) storeKey() ([]byte, error) {
	path, from := e.keyPath()
	if path == "" {
		return nil, nil
	}
	key, err := cube.ReadKeyFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w (named by %s)", unprefixed(err), from)
	}
	return key, nil
}

// keyError puts a refused key (cube.ErrWrongKey) in the command line's
// words: how to give a key, and, if one was given, which file it came
// from. It still matches cube.ErrWrongKey; other errors pass unchanged.
func (e *env) keyError(err error, given bool) error {
	if !errors.Is(err, cube.ErrWrongKey) {
		return err
	}
	msg := strings.Replace(err.Error(), "pass its key in Options.EncryptionKey", "give its key with --key-file FILE or $"+keyFileEnv, 1)
	if path, from := e.keyPath(); given && path != "" {
		msg += fmt.Sprintf(" (the key given: %s %s)", from, path)
	}
	return &keyErr{msg, err}
}

type keyErr struct {
	msg string
	err error
}

func (e *keyErr) Error() string { return e.msg }
func (e *keyErr) Unwrap() error { return e.err }

// unprefixed drops the "cube: " of the root package's errors, which run
// adds again.
func unprefixed(err error) error {
	if msg, ok := strings.CutPrefix(err.Error(), "cube: "); ok {
		return &keyErr{msg, err}
	}
	return err
}

// sizeText is n bytes in B, KiB or MiB.
func sizeText(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
