/** Every workflow the worker registers. */
export { sessionWorkflow } from './session/workflow';
export { userDirectoryWorkflow } from './user/workflow';
export { missionDirectoryWorkflow } from './missions/directory';
export { missionWorkflow } from './missions/workflow';
