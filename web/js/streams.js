// streams.js: the Streams panel's encoding (float or quantized): the one
// every subscription of the page uses, switched live for the character's and
// the crowd's with update_subscription. The per-frame line under it is the
// character's stream's (character.js); the bytes per character of each
// encoding are the described skeleton's (databases.js).
import { $, state } from './shared.js';
import { call, conn } from './session.js';

$('encoding').onchange = async () => {
  state.encoding = $('encoding').value;
  for (const s of [state.character.subscription, state.crowd.subscription]) {
    if (s && conn) await call('update_subscription', { subscription: s, rate_divisor: 1, encoding: state.encoding });
  }
};
