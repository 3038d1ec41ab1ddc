//go:build !race

package jsproc_test

const raceBuild = false
