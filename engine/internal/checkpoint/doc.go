// Package checkpoint is the on-disk format of cube's checkpoints and of the
// manifest that names the current chain of them.
//
// A base checkpoint holds the whole state as of a log position (LSN); a
// delta holds what changed since the previous checkpoint. Recovery reads
// the manifest, loads the base and then each delta in order, and replays
// the write-ahead log after Manifest.LSN. Records are opaque byte strings
// here; the engine encodes namespaces, values, tombstones and edges into
// them.
//
//	w, err := checkpoint.Create(fs, filepath.Join(dir, checkpoint.FileName(h)), h, cipher)
//	defer w.Abort() // removes the file unless Finish succeeded
//	for ... { err = w.Add(rec) }
//	_, err = w.Finish()                         // file durable
//	err = checkpoint.WriteManifest(fs, dir, m)  // chain switched, durably
//	_, err = checkpoint.RemoveUnreferenced(fs, dir, m)
//
// # Crash rules
//
//   - Finish syncs the file (fdatasync) and its directory. A file is
//     complete only with its footer, which is written last; Open refuses a
//     file without a valid footer with ErrIncomplete.
//   - WriteManifest writes MANIFEST.tmp, syncs it, renames it over
//     MANIFEST and syncs the directory. A crash at any point leaves either
//     the old manifest or the new one, never a mix. Once Finish and then
//     WriteManifest returned, a crash keeps the manifest and every file it
//     names intact.
//   - A crash while a checkpoint is being written leaves the previous
//     manifest and its files readable. The partial file is named by no
//     manifest; RemoveUnreferenced deletes it (and any checkpoint file the
//     manifest no longer names, and MANIFEST.tmp). Call it at open, before
//     writing new checkpoints: Create refuses to overwrite an existing file
//     (ErrExists), so that a file the manifest names is never truncated.
//   - An error from a sync is fatal for the writer: the data may not be on
//     disk even if a later sync succeeds. Nothing here retries.
//
// # Errors
//
// Damaged bytes are a *base.CorruptionError (the engine's one corruption
// marker, base.ErrCorruption) naming the file and the byte offset where the
// damaged structure starts. A wrong key is
// ErrWrongKey, a file from a newer cube ErrNewerFormat; neither is
// corruption, and opening changes nothing on disk.
//
// # File format
//
// All integers are little-endian. CRC32C is CRC-32 with the Castagnoli
// polynomial (hash/crc32); "seeded with s" means crc32.Update(s, ...).
//
// Header, 80 bytes in version 1:
//
//	 0  8  magic "CUBECKPT"
//	 8  2  format version (1)
//	10  2  header length in bytes (80); readers of any version find the
//	       header CRC here and check it before they trust the version
//	12  4  header CRC: CRC32C (seed 0) over bytes [0,12) and [16,length)
//	16  1  kind: 1 base, 2 delta
//	17  1  flags: bit 0 encrypted; other bits zero
//	18  2  reserved, zero
//	20  4  salt: random per file; seeds every block CRC
//	24  8  LSN: the state as of this log position
//	32  8  prev: LSN of the checkpoint a delta applies on; 0 for a base
//	40  8  created, Unix nanoseconds (0: unknown)
//	48 28  key check, encrypted files only (zero otherwise): the AES-GCM
//	       seal (nonce, tag) of an empty message with bytes [16,48) as
//	       additional data. The header CRC holds but this does not open:
//	       ErrWrongKey.
//	76  4  reserved, zero
//
// Then data blocks, then one footer block. A block:
//
//	 0  4  body length n (as stored)
//	 4  4  block index: 0, 1, 2, ... for data blocks; the footer's is the
//	       data block count
//	 8  1  type: 1 data, 2 footer
//	 9  3  reserved, zero
//	12  4  CRC32C seeded with the salt over bytes [0,12) and the body
//	16  n  body
//
// A data block's plaintext body is a run of records, each a uvarint length
// followed by that many bytes; the writer fills a block to about BlockSize
// (64 KiB) and gives a larger record a block of its own. A footer's
// plaintext body is 32 bytes:
//
//	 0  8  record count
//	 8  8  data block count
//	16  8  data bytes: the size of all data blocks, headers included (so the
//	       footer starts at header length + data bytes)
//	24  4  rolling checksum: CRC32C seeded with the salt over every data
//	       block as stored, header and body, in order
//	28  4  reserved, zero
//
// In an encrypted file every body, the footer's too, is stored sealed:
// nonce (12) || AES-256-GCM ciphertext || tag (16), with the block's bytes
// [0,12) followed by the 4-byte salt as additional data, so that a block
// cannot be moved to another position or file. The CRC covers the sealed
// bytes: damage is found by the CRC before decryption, and a seal that
// does not open behind a valid CRC (after the key check passed) is
// reported as corruption.
//
// The footer is the last thing in the file and has a fixed size (48 bytes,
// 76 encrypted), so Open reads it first: a file whose tail is not a valid
// footer is incomplete. Reading the blocks then checks each index, CRC and
// seal, and at the end the counts and the rolling checksum against the
// footer.
//
// # Manifest format
//
// The file MANIFEST in the checkpoint directory:
//
//	 0  8  magic "CUBEMANI"
//	 8  2  format version (1)
//	10  2  reserved, zero
//	12  4  body length n
//	16  n  body: seq (8), LSN (8), base name (uvarint length + bytes),
//	       delta count (uvarint), each delta name (uvarint length + bytes)
//	16+n 4 CRC32C (seed 0) over bytes [0,16+n)
//
// Names are plain file names in the manifest's directory, at most 255
// bytes, without separators.
package checkpoint
