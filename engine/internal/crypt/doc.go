// Package crypt seals the engine's log records and checkpoint blocks with
// AES-256-GCM.
//
// Nonces are never reused under one key: each Cipher draws a random 96-bit
// starting nonce from crypto/rand when it is made and adds one for every
// seal. Two ciphers collide only if their ranges of nonces overlap in a
// 2^96 space, which is what makes reuse safe also after a torn log tail is
// truncated and the same LSNs are written again: the record is new, and so
// is its nonce. The nonce travels in front of each sealed message.
package crypt
