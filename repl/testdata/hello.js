// A program for .prog and .run.
function run(args) {
  cube.put([0, 0], "written by hello");
  return "hello " + args;
}
