package cube

import "github.com/cubelinux/cube/engine"

// Namespace is a hard partition of the store: its own coordinates, edges
// and metadata. Nothing in one namespace can reach another. Its methods
// are safe for concurrent use.
type Namespace = engine.Namespace

// Tx is a transaction on one namespace, valid only inside the function
// Namespace.Update or Namespace.View passed it to.
type Tx = engine.Tx

// namespaceOf gives the engine's namespace under cube's name.
func namespaceOf(ns *engine.Namespace, err error) (*Namespace, error) {
	return (*Namespace)(ns), err
}
