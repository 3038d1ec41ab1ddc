// Package nearby is a JavaScript program for a namespace of places stored
// at (lng, lat) x 10^4: the places in a box around a point. cube demo
// registers it; README.md registers nearby.js with cube prog.
package nearby

import _ "embed"

// JS is nearby.js, the program's source.
//
//go:embed nearby.js
var JS []byte
