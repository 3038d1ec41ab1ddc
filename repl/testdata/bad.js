function run(args) {
  return (1 +;
}
