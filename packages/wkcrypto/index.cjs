'use strict';
// The native module when it was built (`npm ci` runs node-gyp), else undefined with the reason.
let native;
let loadError;
try {
  native = require('./build/Release/wkcrypto.node');
} catch (err) {
  loadError = err;
}
module.exports = { native, loadError };
