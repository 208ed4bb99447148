export { Broker, createBroker, type BrokerStats, type PublishOptions, type SubscribeOptions } from './broker.js';
export { isTopicMessage, TopicMessage } from './message.js';
export { Subscription, CallbackSubscription, ActorSubscription, type TopicCallback, type TopicSubscriber } from './subscription.js';
export { TOPIC_CAPS, TOPIC_DEFAULTS, TOPIC_SEED_CEILINGS, type BrokerOptions, type TopicCeilings } from './options.js';
