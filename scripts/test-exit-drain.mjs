// Preloaded (--import) into every test file's process by scripts/test.mjs. With --test-force-exit
// the test runner calls process.exit() as soon as a file's last test ends, and what its reporter
// had not yet written to the pipe to the parent is lost: the parent then counts fewer tests than
// ran, without a failure, and a failing test among the lost ones goes unseen (nodejs/node#64833,
// seen here as the last 4 to 46 tests of a file missing from a run). This defers the exit until
// the reporter's output has left the process (a few event-loop turns, at most 5 s).
const exit = process.exit.bind(process);
let deferred = false;

process.exit = function exitAfterDrain(code) {
  if (code !== undefined) process.exitCode = code;
  if (deferred) return undefined;
  deferred = true;
  const deadline = Date.now() + 5000;
  let quietTurns = 0;
  const check = () => {
    // quiet: nothing buffered in stdout for a few turns in a row (the reporter writes in turns)
    quietTurns = process.stdout.writableLength === 0 ? quietTurns + 1 : 0;
    if (quietTurns >= 3 || Date.now() > deadline) exit(process.exitCode);
    else setTimeout(check, 10);
  };
  setImmediate(check);
  return undefined;
};
