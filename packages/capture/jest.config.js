/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }] },
  moduleNameMapper: {
    // the addon is a plain CommonJS package outside packages/
    '^@jportal/capture-native$': '<rootDir>/../../native/capture/index.js',
    '^@jportal/([a-z-]+)$': '<rootDir>/../$1/src/index.ts',
  },
};
