/** Every workflow the worker registers. */
export { sessionWorkflow } from './session/workflow';
export { userDirectoryWorkflow } from './user/workflow';
