// A library for .load: defines functions the next inputs call.
function double(n) {
  return 2 * n
}
"lib loaded"
