/**
 * The attacker as a process of its own, so that its work never slows the legitimate
 * caller's event loop: `node attacker-child.js NAME TARGET_JSON`, run by `npm run
 * bench:attack` over IPC. It starts the attack at once, and on the message `stop` stops it,
 * sends its counts back and exits.
 */
import { ATTACKS, type AttackName, type AttackTarget, startAttack } from './attackers.js';

const [name, targetJson, maxSeconds] = process.argv.slice(2);
if (
  !(ATTACKS as readonly string[]).includes(name ?? '') ||
  targetJson === undefined ||
  !(Number(maxSeconds) > 0) ||
  process.send === undefined
) {
  process.stderr.write(`usage: attacker-child.js ${ATTACKS.join('|')} TARGET_JSON MAX_SECONDS (over IPC)\n`);
  process.exit(2);
}
const attack = startAttack(name as AttackName, JSON.parse(targetJson) as AttackTarget);
setTimeout(() => {
  attack.stop();
  process.exit(0);
}, Number(maxSeconds) * 1000).unref();
process.on('message', (message) => {
  if (message !== 'stop') return;
  attack.stop();
  process.send?.({ counts: attack.counts }, () => process.exit(0));
});
process.on('disconnect', () => {
  attack.stop();
  process.exit(0);
});
