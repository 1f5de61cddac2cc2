'use strict';
// Loads the built addon (build/Release/jportal_capture.node). The TypeScript API is in @jportal/capture.
module.exports = require('./build/Release/jportal_capture.node');
