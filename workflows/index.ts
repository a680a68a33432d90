/** Every workflow the worker registers. */
export { missionRunWorkflow, sessionWorkflow } from './session/workflow';
export { userDirectoryWorkflow } from './user/workflow';
export { missionDirectoryWorkflow } from './missions/directory';
export { missionOwnerDirectoryWorkflow } from './missions/owner-directory';
export { missionWorkflow } from './missions/workflow';
export { emailDigestWorkflow } from './email/digest';
