'use strict';
// The native module when it was built (`npm ci` runs node-gyp) on Linux, else undefined with the reason.
let native;
let loadError;
if (process.platform !== 'linux') {
  loadError = new Error(`epoll is Linux's; this is ${process.platform}`);
} else {
  try {
    native = require('./build/Release/readpump.node');
  } catch (err) {
    loadError = err;
  }
}
module.exports = { native, loadError };
